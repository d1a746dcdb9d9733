package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// oldRequest is a POST of body in a 2025-03-26 session (none yet: it
// opens one) as alice.
func oldRequest(ctx context.Context, url, session, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	}
	return req
}

// oldPost sends oldRequest and returns the response, whose body the
// caller reads and closes.
func oldPost(t *testing.T, ctx context.Context, url, session, body string) *http.Response {
	t.Helper()
	res, err := http.DefaultClient.Do(oldRequest(ctx, url, session, body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestStopHandsABatchsCallsTheirParkedResults: 2025-03-26 lets a host
// send several calls in one POST (a JSON-RPC batch), and the SDK serves
// them for that revision; a server that stops hands each of them its
// parked result, as it does a call sent alone. Before, the gate tracked
// only a POST carrying one message, so a stop closed the session at
// once, under the batch's calls, and their results were lost.
func TestStopHandsABatchsCallsTheirParkedResults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for round := range 3 {
		t.Run(fmt.Sprint(round), func(t *testing.T) { stopWhileABatchWaits(t, ctx) })
	}
}

func stopWhileABatchWaits(t *testing.T, ctx context.Context) {
	svc, hs, stopNow := stoppable(t)

	init := oldPost(t, ctx, hs.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	init.Body.Close()
	session := init.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("no session opened: HTTP %d", init.StatusCode)
	}
	oldPost(t, ctx, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	const each = 3
	calls := make([]string, each)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"request_clarification","arguments":{"question":"Batched question %d?","reversibility":"reversible"}}}`, 10+i, i)
	}
	// The response's headers may come only with its first event, so the
	// POST is sent in the background.
	type posted struct {
		res *http.Response
		err error
	}
	answered := make(chan posted, 1)
	go func() {
		res, err := http.DefaultClient.Do(oldRequest(ctx, hs.URL, session, "["+strings.Join(calls, ",")+"]"))
		answered <- posted{res, err}
	}()
	ids := waitOpen(t, ctx, svc, each)
	stopNow()
	var p posted
	select {
	case p = <-answered:
	case <-ctx.Done():
		t.Fatal("the batch's POST was not answered once the server stopped")
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	batch := p.res
	defer batch.Body.Close()
	if batch.StatusCode != http.StatusOK {
		t.Fatalf("the batch: HTTP %d, want 200 (the SDK serves batches on 2025-03-26)", batch.StatusCode)
	}

	got := map[int]string{}
	sc := bufio.NewScanner(batch.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for len(got) < each && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var rs []struct {
			ID     int                   `json:"id"`
			Result mcpsdk.CallToolResult `json:"result"`
		}
		if json.Unmarshal([]byte(data), &rs) != nil {
			var one struct {
				ID     int                   `json:"id"`
				Result mcpsdk.CallToolResult `json:"result"`
			}
			if json.Unmarshal([]byte(data), &one) != nil {
				continue
			}
			rs = append(rs, one)
		}
		for _, r := range rs {
			if len(r.Result.Content) == 1 {
				tc, _ := r.Result.Content[0].(*mcpsdk.TextContent)
				if tc != nil {
					got[r.ID] = tc.Text
				}
			}
		}
	}
	if len(got) != each {
		t.Fatalf("the batch's stream ended with %d of its %d results (%v)", len(got), each, sc.Err())
	}
	for rid, text := range got {
		id, ok := strings.CutPrefix(text, "Question ")
		id, _, _ = strings.Cut(id, " ")
		if !ok || !ids[core.QuestionID(id)] || !strings.Contains(text, "still parked") {
			t.Errorf("call %d of the batch got %q, want its parked result naming its question", rid, text)
		}
		delete(ids, core.QuestionID(id))
	}
}
