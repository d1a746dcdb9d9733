package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAskTimeoutHasAFloor: an ask's timeout, when sent, is a deadline of
// at least core.MinAskTimeout. Before, "1ns" (or any slip of the unit: "500ms"
// meant as minutes) was taken, and the question timed out at the next
// tick with its cards sent to people for nothing; "0s" silently took the
// configured default, unlike MCP's tools, which refuse a timeout that is
// not positive. Both are now a 400 naming timeout, with nothing stored;
// a timeout left out (or null) still takes the default, and core.MinAskTimeout
// itself is taken.
func TestAskTimeoutHasAFloor(t *testing.T) {
	e := newEnv(t)
	const ask = `{"kind":"clarification","reversibility":"reversible","run_id":"run-t","question":"Q?"`
	for _, c := range []struct{ timeout, want string }{
		{`"1ns"`, "shorter than the minimum"},
		{`"999ms"`, "shorter than the minimum"},
		{`"0s"`, "no deadline"},
		{`"0d"`, "no deadline"},
		{`"0h0m"`, "no deadline"},
	} {
		before := snapshot(t, e.store)
		r := e.do("POST", "/v1/questions", &agentA, ask+`,"timeout":`+c.timeout+`}`)
		if r.status != http.StatusBadRequest || !strings.Contains(errorOf(t, r).Message, "timeout") || !strings.Contains(errorOf(t, r).Message, c.want) {
			t.Errorf("timeout %s: %d %s; want a 400 naming timeout and saying %q", c.timeout, r.status, r.body, c.want)
		}
		if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
			t.Errorf("timeout %s: the refusal changed the store (-before +after):\n%s", c.timeout, d)
		}
	}
	for _, c := range []struct {
		body string
		want time.Duration
	}{
		{ask + `,"tool_call_id":"t1"}`, core.DefaultTimeout}, // coretest's service sets none of its own
		{ask + `,"tool_call_id":"t2","timeout":null}`, core.DefaultTimeout},
		{ask + `,"tool_call_id":"t3","timeout":"1s"}`, core.MinAskTimeout},
		{ask + `,"tool_call_id":"t4","timeout":"1d12h"}`, 36 * time.Hour},
	} {
		r := e.do("POST", "/v1/questions", &agentA, c.body)
		var q client.AgentQuestion
		if r.status != http.StatusCreated || json.Unmarshal(r.body, &q) != nil || time.Duration(q.Timeout) != c.want {
			t.Errorf("%s: %d %s; want 201 with a timeout of %s", c.body, r.status, r.body, c.want)
		}
	}
	// The Go client's zero Timeout is not sent, so it still means the
	// default; one under the floor is the server's 400.
	req := clarification("run-t")
	req.ToolCallID, req.Timeout = "t5", 0
	if q, err := e.as(agentA).Ask(e.ctx(), req); err != nil || time.Duration(q.Timeout) != core.DefaultTimeout {
		t.Errorf("the client's zero timeout: %+v, %v; want the default", q, err)
	}
	req.ToolCallID, req.Timeout = "t6", client.Duration(time.Millisecond)
	var ce *client.Error
	if _, err := e.as(agentA).Ask(e.ctx(), req); !errors.As(err, &ce) || ce.Status != http.StatusBadRequest {
		t.Errorf("the client's 1ms timeout: %v; want a 400", err)
	}
}
