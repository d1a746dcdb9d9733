package app_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestMaxWaitsPerQuestionFromTheEnvironment: ASKBRIDGE_MAX_WAITS_PER_QUESTION
// bounds the waits one question may have parked on the replica: with 2,
// of three waits on one question one is refused at once, 429 with
// Retry-After, and the two parked ones get the answer. Before, the
// variable was not read, and the bound was 256 whatever was set.
func TestMaxWaitsPerQuestionFromTheEnvironment(t *testing.T) {
	s := apptest.FromEnv(t, map[string]string{"ASKBRIDGE_MAX_WAITS_PER_QUESTION": "2"})
	s.DataDir = "" // the test's own
	m := apptest.Start(t, s)
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "toolu_1"})
	if err != nil {
		t.Fatal(err)
	}
	type waited struct {
		status     int
		retryAfter string
		err        error
	}
	waits := make(chan waited, 3)
	for range 3 {
		go func() {
			// Unanswered, a parked wait ends after 5s, open: before the
			// fix the first to end was such a 200, not a 429.
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, m.URL+"/v1/questions/"+string(q.ID)+"/wait?timeout=5s", nil)
			if err != nil {
				waits <- waited{err: err}
				return
			}
			req.Header.Set("Authorization", "Bearer "+apptest.AgentA)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				waits <- waited{err: err}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			waits <- waited{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		}()
	}
	if w := <-waits; w.status != http.StatusTooManyRequests || w.retryAfter == "" {
		t.Fatalf("the first of three waits to end: %+v; want a 429 with Retry-After, the bound being 2", w)
	}
	if _, err := client.New(m.URL, m.AdminToken).Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if w := <-waits; w.status != http.StatusOK {
			t.Errorf("a parked wait: %+v; want 200 with the answer", w)
		}
	}
}

// TestMaxWaitsPerQuestionRefused: a bound that is no whole number, or
// below 1 (0 would refuse every wait, or read as the default: neither
// is what was meant), or so large that it bounds nothing, stops serve
// with exit 78, naming the variable, before anything is made (the data
// directory is not). Those in range load.
func TestMaxWaitsPerQuestionRefused(t *testing.T) {
	for _, v := range []string{"-1", "0", "many", "1.5", "0x10", "65537", "99999999999999999999"} {
		data := filepath.Join(t.TempDir(), "data")
		env := map[string]string{"ASKBRIDGE_MAX_WAITS_PER_QUESTION": v, "ASKBRIDGE_ADDR": "127.0.0.1:0", "ASKBRIDGE_DATA_DIR": data}
		// Stopped before it starts: a serve that took the value would
		// otherwise run until the test ends.
		stopped, stop := context.WithCancel(t.Context())
		stop()
		code, _, errb := runAll(stopped, func(k string) string { return env[k] }, "", "serve")
		if code != app.ExitConfig || !strings.Contains(errb, "ASKBRIDGE_MAX_WAITS_PER_QUESTION") || !strings.Contains(errb, "1 to 65536") {
			t.Errorf("ASKBRIDGE_MAX_WAITS_PER_QUESTION=%q: serve exited %d, stderr %q; want %d naming the variable and its range", v, code, errb, app.ExitConfig)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Errorf("ASKBRIDGE_MAX_WAITS_PER_QUESTION=%q: the data directory was made (%v)", v, err)
		}
	}
	for _, v := range []string{"", "1", " 300\n", "65536"} {
		if _, err := app.LoadSettings(func(k string) string { return map[string]string{"ASKBRIDGE_MAX_WAITS_PER_QUESTION": v}[k] }); err != nil {
			t.Errorf("ASKBRIDGE_MAX_WAITS_PER_QUESTION=%q: %v; want it taken", v, err)
		}
	}
}
