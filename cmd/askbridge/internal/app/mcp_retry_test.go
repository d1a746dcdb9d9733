package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestMCPStdioRetryAsksOnce: the stdio process's ask that gave up not
// knowing whether it was parked (its replies lost), asked again by the
// host, gets the one question; before, the retry parked a second one and
// people were asked twice.
func TestMCPStdioRetryAsksOnce(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	target, _ := url.Parse(m.URL)
	forward := httputil.NewSingleHostReverseProxy(target)
	var asks atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/questions" && asks.Add(1) <= 2 {
			forward.ServeHTTP(httptest.NewRecorder(), r) // stored, its reply lost
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	b := app.NewClientBackend(client.New(proxy.URL, apptest.AgentA))
	in := core.AskInput{Kind: core.KindClarification, RunID: "run-1", Text: "Proceed?", Reversibility: core.Reversible}
	ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancel()
	if _, err := b.Ask(ctx, in); err == nil {
		t.Fatal("the ask whose replies were lost succeeded")
	}
	q, err := b.Ask(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	page, err := client.New(m.URL, apptest.OpTok).List(t.Context(), "", 50)
	if err != nil || len(page.Questions) != 1 || page.Questions[0].ID != q.ID {
		t.Fatalf("open questions %+v (%v), want exactly %s", page, err, q.ID)
	}
}

// TestMCPStdioTellsARepeat: the stdio process's backend says which ask
// the server took as a repeat (200, not 201), so the door refuses a
// tool_call_id reused long after its question closed there too (the
// door's own test: adapters/mcp's TestReusedToolCallIDAfterTheWindow);
// before, it called every ask new, and an old approval came back as this
// call's.
func TestMCPStdioTellsARepeat(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	b, ok := app.NewClientBackend(client.New(m.URL, apptest.AgentA)).(mcp.RepeatAsker)
	if !ok {
		t.Fatal("the stdio backend does not tell a repeat")
	}
	in := core.AskInput{Kind: core.KindClarification, RunID: "run-1", ToolCallID: "call-1", Text: "Proceed?", Reversibility: core.Reversible}
	first, repeat, err := b.AskOrRepeat(t.Context(), in)
	if err != nil || repeat {
		t.Fatalf("first ask: repeat %v, %v", repeat, err)
	}
	again, repeat, err := b.AskOrRepeat(t.Context(), in)
	if err != nil || !repeat || again.ID != first.ID {
		t.Fatalf("the same call again: %+v, repeat %v, %v; want %s, a repeat", again, repeat, err, first.ID)
	}
}
