// Package redistest starts private redis-server processes for tests.
//
// Each server listens on a free 127.0.0.1 port, keeps nothing on disk
// (--save "" --appendonly no) and is killed when the test ends, so tests
// never touch a shared Redis and never flush someone else's data. A missing
// redis-server is a test failure, never a skip: CI must not pass by running
// nothing.
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// InstallHint says how to get redis-server when it is missing.
const InstallHint = "redis-server is not on PATH; install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis)"

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 15 * time.Second

// Server is one private redis-server process.
type Server struct {
	addr    string
	cluster bool
	cmd     *exec.Cmd
	out     *lockedBuffer
	exited  chan struct{}
	once    sync.Once
}

// Start starts a standalone redis-server for the test and stops it when
// the test ends. It fails the test if redis-server is missing or does not
// come up.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer(t.TempDir())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartCluster starts a one-node Redis Cluster that serves all 16384
// slots, for the test. Scripts whose keys span slots fail on it with
// CROSSSLOT, exactly as on a real cluster.
func StartCluster(t testing.TB) *Server {
	t.Helper()
	s, err := StartClusterServer(t.TempDir())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartServer starts a standalone redis-server with its working directory
// in dir and returns once it answers PING. It is for TestMain, where there
// is no testing.TB: the caller must Close the server.
func StartServer(dir string) (*Server, error) {
	return start(dir, false)
}

// StartClusterServer is StartCluster for TestMain: the caller must Close
// the server.
func StartClusterServer(dir string) (*Server, error) {
	return start(dir, true)
}

func start(dir string, cluster bool) (*Server, error) {
	s, err := startWith(dir, func(port int) ([]string, error) { return serverArgs(port, dir, cluster), nil })
	if err != nil || !cluster {
		return s, err
	}
	s.cluster = true
	if err := s.assignSlots(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// serverArgs are a private server's arguments: nothing on disk, quiet,
// and cluster mode if asked.
func serverArgs(port int, dir string, cluster bool, extra ...string) []string {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--loglevel", "warning",
		// DEBUG SLEEP lets a test hold a replica a second behind, as a
		// loaded host would.
		"--enable-debug-command", "local",
		// A replica's first full sync starts at once, not after the
		// five seconds Redis waits by default for more replicas to share
		// it: most of a replicated set-up's start was that wait.
		"--repl-diskless-sync-delay", "0",
	}
	if cluster {
		args = append(args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port))
	}
	return append(args, extra...)
}

// startWith starts redis-server with the arguments args makes for a free
// port, and returns once it answers PING.
func startWith(dir string, args func(port int) ([]string, error)) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(InstallHint)
	}
	// Another process may take the free port between our probe and the
	// server's bind; a few tries make that race harmless.
	var lastErr error
	for range 5 {
		s, err := launch(bin, args)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(bin string, argsFor func(port int) ([]string, error)) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args, err := argsFor(port)
	if err != nil {
		return nil, err
	}
	s := &Server{
		addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		out:    &lockedBuffer{},
		exited: make(chan struct{}),
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout = s.out
	s.cmd.Stderr = s.out
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.addr }

// Close kills the server (SIGKILL, as a crash would) and waits for it to
// exit. It is safe to call more
// than once.
func (s *Server) Close() {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
		<-s.exited
	})
}

// Do sends one command on a fresh connection and returns its reply: a
// status or an integer as its text, a bulk string's contents, a server
// error as an error, a flat array as its elements joined by spaces. It is for setup, not for the
// code under test, which brings its own client.
func (s *Server) Do(args ...string) (string, error) {
	return s.do(nil, args)
}

// CPU is the CPU the server has used (INFO cpu, user and system), for
// benchmarks that report it beside their own.
func (s *Server) CPU() (time.Duration, error) {
	info, err := s.Do("INFO", "cpu")
	if err != nil {
		return 0, err
	}
	var sum float64
	for line := range strings.Lines(info) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu: %s: %w", strings.TrimSpace(line), err)
			}
			sum += f
		}
	}
	return time.Duration(sum * float64(time.Second)), nil
}

// ReadReplica is Do on a replica: on a cluster's it sends READONLY first,
// on the same connection, so the replica serves the read instead of
// redirecting it to the primary.
func (s *Server) ReadReplica(args ...string) (string, error) {
	if !s.cluster {
		return s.Do(args...)
	}
	return s.do([]string{"READONLY"}, args)
}

// do sends first (if any) and then args on one fresh connection, and
// returns args' reply.
func (s *Server) do(first, args []string) (string, error) {
	conn, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	for _, cmd := range [][]string{first, args} {
		if cmd == nil {
			continue
		}
		fmt.Fprintf(&b, "*%d\r\n", len(cmd))
		for _, a := range cmd {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	if first != nil {
		if line, err := r.ReadString('\n'); err != nil || strings.HasPrefix(line, "-") {
			return "", fmt.Errorf("%s: %q %v", first[0], line, err)
		}
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "*") {
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", nil
		}
		parts := make([]string, 0, n)
		for range n {
			line, err := r.ReadString('\n')
			if err != nil {
				return "", err
			}
			v, err := readValue(r, strings.TrimRight(line, "\r\n"))
			if err != nil {
				return "", err
			}
			parts = append(parts, v)
		}
		return strings.Join(parts, " "), nil
	}
	return readValue(r, line)
}

// readValue reads the rest of one reply that is not an array, whose
// first line is line.
func readValue(r *bufio.Reader, line string) (string, error) {
	if strings.HasPrefix(line, "$") {
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	switch {
	case strings.HasPrefix(line, "-"):
		return "", errors.New(line[1:])
	case strings.HasPrefix(line, "+"), strings.HasPrefix(line, ":"):
		return line[1:], nil
	}
	return line, nil
}

func (s *Server) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server on %s exited during start: %s", s.addr, strings.TrimSpace(s.out.String()))
		default:
		}
		if reply, err := s.Do("PING"); err == nil && reply == "PONG" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING within %s: %s", s.addr, startTimeout, strings.TrimSpace(s.out.String()))
		}
		time.Sleep(20 * time.Millisecond) // polling a starting process, not a test assertion
	}
}

func (s *Server) assignSlots() error {
	if _, err := s.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
		return fmt.Errorf("assign cluster slots: %w", err)
	}
	deadline := time.Now().Add(startTimeout)
	for {
		info, err := s.Do("CLUSTER", "INFO")
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster on %s not ok within %s: %q %v", s.addr, startTimeout, info, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a starting process, not a test assertion
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer collects the server's output for error messages; the
// process writes it while a test may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // keep the head; it says why a start failed
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
