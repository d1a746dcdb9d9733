package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// aliceBearer sends every request with alice's token.
type aliceBearer struct{}

func (aliceBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer tok-alice")
	return http.DefaultTransport.RoundTrip(r)
}

// waitOpen waits, within a bound, until n questions are open, and
// returns their ids.
func waitOpen(t *testing.T, ctx context.Context, svc *core.Service, n int) map[core.QuestionID]bool {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		qs, _, err := svc.ListOpen(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) == n {
			ids := map[core.QuestionID]bool{}
			for _, q := range qs {
				ids[q.ID] = true
			}
			return ids
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("%d questions open, want %d", len(qs), n)
		}
	}
}

// TestStopHandsEveryCallItsParkedResult: a server that stops (to
// restart, say) ends the calls in progress, and each call's host gets
// the result that names its question, still parked, for get_answer
// after the restart: over a 2025-11-25 session as over 2026-07-28.
// Before, the handler closed every session at once on Stop, racing the
// calls' results: most hosts got "request terminated without response"
// (or a 2026-07-28 POST ended with no response), kept no question id,
// and, in the new session a restart forces on them (a new run), asked
// again, so people were asked twice. The stop races the calls' ends, so
// it is played a few times over.
func TestStopHandsEveryCallItsParkedResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { stopWhileCallsWait(t, ctx) })
	}
}

// stoppable is an MCP server over HTTP on a service of its own, and
// the Stop the test pulls to end the calls in progress.
func stoppable(t *testing.T) (*core.Service, *httptest.Server, context.CancelFunc) {
	svc := newService(t)
	stop, stopNow := context.WithCancel(context.Background())
	t.Cleanup(stopNow)
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc},
		mcp.Options{Stop: stop, WaitSlice: 20 * time.Millisecond, Caller: agentOf})))
	t.Cleanup(hs.Close)
	return svc, hs, stopNow
}

// stopWhileCallsWait stops a server while calls of both eras wait, and
// checks that each gets its parked result.
func stopWhileCallsWait(t *testing.T, ctx context.Context) {
	svc, hs, stopNow := stoppable(t)

	const each = 6
	results := make(chan string, 2*each) // each call's text, or why it has none
	for i := range each {
		// A host that tries its standing stream again, as hosts do, rather
		// than fail the session the moment it drops (aliceOn's client).
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-client", Version: "1"}, nil).
			Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: aliceBearer{}}}, legacy)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		ch := callOn(ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification,
			Arguments: map[string]any{"question": fmt.Sprintf("Session question %d?", i), "reversibility": "reversible"}})
		go func() {
			r := <-ch
			switch {
			case r.err != nil:
				results <- "session call failed: " + r.err.Error()
			case len(r.res.Content) != 1:
				results <- fmt.Sprintf("session call returned %d content blocks", len(r.res.Content))
			default:
				tc, _ := r.res.Content[0].(*mcpsdk.TextContent)
				results <- tc.Text
			}
		}()
	}
	host := &taskClient{t: t, http: &http.Client{Transport: aliceBearer{}}, url: hs.URL, caps: map[string]any{}}
	for i := range each {
		go func() {
			raw, err := host.callTool(ctx, mcp.ToolClarification, map[string]any{
				"question": fmt.Sprintf("Stateless question %d?", i), "reversibility": "reversible"})
			var res mcpsdk.CallToolResult
			switch {
			case err != nil:
				results <- "stateless call failed: " + err.Error()
			case json.Unmarshal(raw, &res) != nil || len(res.Content) != 1:
				results <- "stateless call returned " + string(raw)
			default:
				tc, _ := res.Content[0].(*mcpsdk.TextContent)
				results <- tc.Text
			}
		}()
	}
	ids := waitOpen(t, ctx, svc, 2*each)
	stopNow()
	for range 2 * each {
		var got string
		select {
		case got = <-results:
		case <-ctx.Done():
			t.Fatal("a call did not end when the server stopped")
		}
		id, ok := strings.CutPrefix(got, "Question ")
		id, _, _ = strings.Cut(id, " ")
		if !ok || !ids[core.QuestionID(id)] || !strings.Contains(got, "still parked") {
			t.Errorf("a call ended by the stop got %q, want its parked result naming its question", got)
			continue
		}
		delete(ids, core.QuestionID(id))
	}
}
