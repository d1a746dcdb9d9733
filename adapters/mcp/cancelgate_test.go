package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// sessionPost sends body in session as the holder of token and returns
// the response, whose body the caller reads and closes.
func sessionPost(t *testing.T, ctx context.Context, url, token, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAnotherCallersCancelReachesNoCall: a notifications/cancelled that
// another agent sends under a session's id, naming a call in flight in
// it, is refused (the session is not theirs) and changes nothing: the
// session's own call still gets its answer. Before, the gate that
// withholds a cancelled call's response acted on the cancel before the
// SDK refused it, so one agent holding another's session id could
// silence that agent's calls, which then waited on and ended with no
// response at all.
func TestAnotherCallersCancelReachesNoCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	svc := newService(t)
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{Caller: agentOf})))
	defer hs.Close()
	alice := &sessionRPC{t: t, url: hs.URL, token: "tok-alice"}
	alice.open(ctx)

	call := sessionPost(t, ctx, hs.URL, "tok-alice", alice.session,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"request_clarification","arguments":{"question":"Which region?","reversibility":"reversible"}}}`)
	defer call.Body.Close()
	q := waitParked(t, ctx, svc)

	theirs := sessionPost(t, ctx, hs.URL, "tok-mallory", alice.session,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"not mine to cancel"}}`)
	theirs.Body.Close()
	if theirs.StatusCode != http.StatusForbidden {
		t.Errorf("another agent's cancel in the session: HTTP %d, want 403", theirs.StatusCode)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}

	sc := bufio.NewScanner(call.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     int                   `json:"id"`
			Result mcpsdk.CallToolResult `json:"result"`
		}
		if json.Unmarshal([]byte(data), &m) != nil || m.ID != 7 {
			continue
		}
		resumed(t, &m.Result, q.ID, fence.VerbAnswered)
		return
	}
	t.Fatalf("the call's stream ended with no response (%v)", sc.Err())
}
