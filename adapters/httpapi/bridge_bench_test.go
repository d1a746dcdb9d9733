package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/benchstore"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/gcfloor"
	"github.com/askbridge/askbridge/store/bolt"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// A benchmark that times the bridge from outside, as the figures
// were measured, runs the API in a process of its own: this test binary
// started again with bridgeVar set. In one process the clients' thousand
// parked requests (a goroutine and two connection loops each) and their
// garbage would be scanned and collected by the bridge's garbage
// collector, and their CPU counted as the bridge's; apart, each process
// pays for its own, and the benchmark reports each one's CPU.
//
// The bridge process speaks over its standard streams, one line each:
// it writes "listening <url>" once serving, "watching <id>" each time a
// wait starts watching a question, and "ok" or "error <why>" after each
// command; it reads the commands "profile <dir> <name>" (start profiling,
// see benchstore.Profile) and "stop" (write the profiles), and exits when
// its standard input closes.
const bridgeVar = "ASKBRIDGE_BENCH_BRIDGE"

func TestMain(m *testing.M) {
	if spec := os.Getenv(bridgeVar); spec != "" {
		if err := serveBridge(spec, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bridge:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveBridge serves the API over the store spec names ("bolt:<file>" or
// "redis:<url>"), or the bare server ("bare:", bareAPI), until in closes,
// speaking the protocol above, with the collector run as askbridge serve
// runs it.
func serveBridge(spec string, in io.Reader, out io.Writer) error {
	defer gcfloor.Server(os.Getenv, memlimit.FromCgroup).Stop() // as askbridge serve does
	var mu sync.Mutex                                           // one line at a time on out
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var srv *http.Server
	kind, where, _ := strings.Cut(spec, ":")
	if kind == "bare" {
		api, err := bareAPI(func(id string) { say("watching %s", id) })
		if err != nil {
			l.Close()
			return err
		}
		srv = &http.Server{Handler: api}
		go func() { _ = srv.Serve(l) }()
	} else {
		api, closeStore, err := bridgeAPI(kind, where, func(id core.QuestionID) { say("watching %s", id) })
		if err != nil {
			l.Close()
			return err
		}
		defer closeStore()
		srv = &http.Server{Handler: api}
		go func() { _ = srv.Serve(api.Listener(l)) }()
	}
	defer srv.Close()
	say("listening http://%s", l.Addr())

	var prof *benchstore.Profile
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		cmd := strings.Fields(lines.Text())
		switch {
		case len(cmd) == 3 && cmd[0] == "profile":
			prof, err = benchstore.StartProfile(cmd[1], cmd[2])
		case len(cmd) == 1 && cmd[0] == "stop":
			err, prof = prof.Stop(), nil
		default:
			err = fmt.Errorf("unknown command %q", lines.Text())
		}
		if err != nil {
			say("error %v", err)
			continue
		}
		say("ok")
	}
	return lines.Err()
}

// bridgeAPI is the API over the store of the kind named ("bolt" or
// "redis") at where, noting each question a wait starts watching; the
// function it returns closes the store.
func bridgeAPI(kind, where string, watching func(core.QuestionID)) (*httpapi.Server, func() error, error) {
	var st core.Store
	var err error
	switch kind {
	case "bolt":
		st, err = bolt.Open(where, bolt.Options{})
	case "redis":
		st, err = redisstore.Open(context.Background(), where, redisstore.Options{})
	default:
		err = fmt.Errorf("%s=%s:%s: want bolt:<file>, redis:<url> or bare:", bridgeVar, kind, where)
	}
	if err != nil {
		return nil, nil, err
	}
	svc, err := core.New(&noteWatch{Store: st, note: watching}, core.Config{Routes: coretest.APIRoutes(), ActorKey: []byte(coretest.ActorKey)}, nil)
	if err == nil {
		var api *httpapi.Server
		if api, err = httpapi.New(svc, httpapi.Options{Tokens: tokens, Log: zerolog.Nop()}); err == nil {
			return api, st.Close, nil
		}
	}
	st.Close()
	return nil, nil, err
}

// bridgeProcess is the bridge's process as the benchmark sees it.
type bridgeProcess struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan string // "ok" or "error <why>", one per command
}

// startBridge starts the API over env's kind of store in a process of its
// own (a fresh bolt file, or env's redis-server) and returns the
// benchmark's view of it; the process ends with the benchmark.
func startBridge(b *testing.B, env benchstore.Env, watchBuf int) *benchEnv {
	b.Helper()
	spec := "bolt:" + filepath.Join(b.TempDir(), "askbridge.db")
	if env.Redis != nil {
		spec = "redis:" + env.Redis.URL()
	}
	return startProcess(b, spec, watchBuf)
}

// startBare starts bareAPI in a process of its own, as startBridge
// starts the bridge.
func startBare(b *testing.B, watchBuf int) *benchEnv {
	b.Helper()
	return startProcess(b, "bare:", watchBuf)
}

// startProcess starts this test binary as the bridge process serving
// spec (serveBridge) and returns the benchmark's view of it.
func startProcess(b *testing.B, spec string, watchBuf int) *benchEnv {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), bridgeVar+"="+spec)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &bridgeProcess{cmd: cmd, in: in, replies: make(chan string, 1)}
	b.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("the bridge process: %v", err)
		}
	})
	watching := make(chan core.QuestionID, watchBuf)
	listening := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			line := lines.Text()
			switch verb, rest, _ := strings.Cut(line, " "); verb {
			case "listening":
				listening <- rest
			case "watching":
				watching <- core.QuestionID(rest)
			default:
				p.replies <- line
			}
		}
		close(listening)
		close(p.replies)
	}()
	url, ok := <-listening
	if !ok {
		b.Fatal("the bridge process ended before it served")
	}
	return &benchEnv{url: url, watching: watching, hc: benchClient(b), bridge: p}
}

// process names the bridge's process for benchstore.StartCPU: its CPU is
// reported as "cpu-bridge-%".
func (p *bridgeProcess) process() benchstore.Process {
	return benchstore.Process{Name: "bridge", PID: p.cmd.Process.Pid}
}

// profile starts profiling the bridge's process if benchstore.ProfileDir
// is set, into files named after b and ".bridge"; the function it returns
// stops it and writes them.
func (p *bridgeProcess) profile(b *testing.B) func() {
	dir := os.Getenv(benchstore.ProfileDir)
	if dir == "" {
		return func() {}
	}
	p.command(b, "profile "+dir+" "+b.Name()+".bridge")
	return func() { p.command(b, "stop") }
}

// command sends the bridge process one command and fails on its error.
func (p *bridgeProcess) command(b *testing.B, cmd string) {
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		b.Fatal(err)
	}
	switch reply, ok := <-p.replies; {
	case !ok:
		b.Fatal("the bridge process has ended")
	case reply != "ok":
		b.Fatal(errors.New(reply))
	}
}
