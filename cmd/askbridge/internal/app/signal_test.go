package app_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

// TestASecondSignalStopsAtOnce: the first SIGTERM begins a graceful
// stop, which may wait on a server that does not answer (here the hook
// command withdrawing its question); a second one ends the process at
// once, by the signal, as an operator's second Ctrl-C expects. Before,
// the second was swallowed and the process waited out its stop.
func TestASecondSignalStopsAtOnce(t *testing.T) {
	in, err := os.ReadFile(filepath.Join(apptest.HookTestdata, "claude-code/permission-request.bash.json"))
	if err != nil {
		t.Fatal(err)
	}
	// A signal that comes before the command has read the question's id
	// ends it at once, with nothing to withdraw: then it is tried again.
	for try := range 10 {
		if stopped, ok := signalTwice(t, in); ok {
			if !stopped {
				t.Fatal("after a second SIGTERM the process went on with its stop; want it ended by the signal")
			}
			return
		}
		t.Logf("try %d: the first signal came before the question's id", try)
	}
	t.Fatal("the first signal never came after the question's id")
}

// signalTwice runs the hook command against a server that never answers
// the question nor its withdrawal, sends SIGTERM once the server has sent
// the question's id and again once the withdrawal has begun, and reports
// whether the second ended the process by the signal; ok is false if the
// process ended before it withdrew.
func signalTwice(t *testing.T, in []byte) (stopped, ok bool) {
	asked, withdrawing, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/hooks/"):
			w.Header().Set(hooks.HeaderQuestionID, "q1")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(asked)
		case strings.HasSuffix(r.URL.Path, "/cancel"):
			close(withdrawing)
		}
		<-release // answers nothing: the question stays open, the withdrawal hangs
	}))
	defer srv.Close()
	defer close(release) // before Close, which waits for the handlers
	cmd := exec.Command(os.Args[0], "hook", "--host", "claude-code")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASKBRIDGE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, apptest.AsProgram+"=1", "ASKBRIDGE_URL="+srv.URL, "ASKBRIDGE_TOKEN="+apptest.AgentA)
	cmd.Stdin = strings.NewReader(string(in))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() { _ = cmd.Process.Kill(); <-exited }()
	<-asked
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-withdrawing: // in its graceful stop, waiting on the server
	case <-exited:
		return false, false
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-exited
	ws, isWS := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return isWS && ws.Signaled() && ws.Signal() == syscall.SIGTERM, true
}
