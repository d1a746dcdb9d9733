package httpapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// withDeclines keeps declines as the program does: in the MCP door's own
// store keys (mcp.ServiceBackend), for the question's agent.
func withDeclines(svc *core.Service, o *httpapi.Options) {
	o.HostDeclines = func(a core.AgentID) httpapi.HostDeclines { return mcp.ServiceBackend{Svc: svc, Agent: a} }
}

// TestMCPDeclineKeptForTheAgent: an agent's host's decline of a task's
// form, kept through the API, is the decline /mcp keeps: read back
// through the API and by the MCP door's own backend, for that form's key
// alone. Another agent's token, like an unknown id, gets the 404 of a
// question it may not see, and keeps nothing. Before, the API had no
// such route, so `askbridge mcp` could not keep a decline at all.
func TestMCPDeclineKeptForTheAgent(t *testing.T) {
	e := newEnvOn(t, coretest.OpenStore(t), withDeclines)
	ctx := e.ctx()
	a, b := e.as(agentA), e.as(agentB)
	id := e.ask(agentA, "run-decline")
	const key, other = "askbridge-host-answer-0123456789abcdef0123", "askbridge-host-answer-ffffffffffffffffffff"

	if d, err := a.HostDeclined(ctx, id, key); err != nil || d.Declined || d.QuestionID != id || d.Key != key {
		t.Fatalf("before a decline: %+v, %v; want not declined", d, err)
	}
	for _, q := range []core.QuestionID{id, "aaaaaaaaaaaaaaaaa"} {
		if _, err := b.DeclineInHost(ctx, q, key); !hasStatus(err, http.StatusNotFound) {
			t.Errorf("agent-b's decline on %s: %v, want 404", q, err)
		}
		if _, err := b.HostDeclined(ctx, q, key); !hasStatus(err, http.StatusNotFound) {
			t.Errorf("agent-b's read on %s: %v, want 404", q, err)
		}
	}
	if d, err := a.HostDeclined(ctx, id, key); err != nil || d.Declined {
		t.Fatalf("after agent-b's attempt: %+v, %v; want not declined", d, err)
	}

	if d, err := a.DeclineInHost(ctx, id, key); err != nil || !d.Declined || d.QuestionID != id || d.Key != key {
		t.Fatalf("decline: %+v, %v", d, err)
	}
	if d, err := a.HostDeclined(ctx, id, key); err != nil || !d.Declined {
		t.Fatalf("read back: %+v, %v; want declined", d, err)
	}
	if d, err := a.HostDeclined(ctx, id, other); err != nil || d.Declined {
		t.Fatalf("another form's key: %+v, %v; want not declined", d, err)
	}
	if yes, err := (mcp.ServiceBackend{Svc: e.svc, Agent: "agent-a"}).HostFormDeclined(ctx, id, key); err != nil || !yes {
		t.Fatalf("the MCP door's backend reads %v, %v; want the decline kept through the API", yes, err)
	}
	if rec, err := e.as(operator).Get(ctx, id); err != nil || rec.State != core.StateOpen {
		t.Fatalf("after the host's decline the question is %+v, %v; want it open for chat", rec, err)
	}
	if _, err := e.as(operator).HostDeclined(ctx, id, key); !hasStatus(err, http.StatusForbidden) {
		t.Errorf("an operator's read: %v, want 403: the door is the agent's host's", err)
	}
}

// TestMCPDeclineChecksItsInput: the key is required, bounded and plain;
// the body is taken strictly and within the API's limit, like every
// other body; the query takes key alone, once.
func TestMCPDeclineChecksItsInput(t *testing.T) {
	e := newEnvOn(t, coretest.OpenStore(t), withDeclines)
	id := e.ask(agentA, "run-decline")
	path := "/v1/questions/" + string(id) + "/mcp/decline"
	for name, c := range map[string]struct {
		method, query, body string
		status              int
	}{
		"no key":         {http.MethodPost, "", `{}`, http.StatusBadRequest},
		"no body":        {http.MethodPost, "", ``, http.StatusBadRequest},
		"unknown field":  {http.MethodPost, "", `{"key":"k","action":"decline"}`, http.StatusBadRequest},
		"key twice":      {http.MethodPost, "", `{"key":"k","key":"j"}`, http.StatusBadRequest},
		"odd bytes":      {http.MethodPost, "", `{"key":"a:b"}`, http.StatusBadRequest},
		"long key":       {http.MethodPost, "", `{"key":"` + strings.Repeat("k", 129) + `"}`, http.StatusBadRequest},
		"too large":      {http.MethodPost, "", `{"key":"` + strings.Repeat("k", httpapi.MaxBodyBytes) + `"}`, http.StatusRequestEntityTooLarge},
		"read no key":    {http.MethodGet, "", ``, http.StatusBadRequest},
		"read key twice": {http.MethodGet, "?key=a&key=b", ``, http.StatusBadRequest},
		"read other":     {http.MethodGet, "?key=a&form=b", ``, http.StatusBadRequest},
		"read odd bytes": {http.MethodGet, "?key=a%2Fb", ``, http.StatusBadRequest},
	} {
		r := e.do(c.method, path+c.query, &agentA, c.body, "Content-Type", "application/json")
		if r.status != c.status || errorOf(t, r).Code != core.CodeInvalid {
			t.Errorf("%s: %d %s, want %d invalid", name, r.status, r.body, c.status)
		}
	}
	if d, err := e.as(agentA).HostDeclined(e.ctx(), id, "k"); err != nil || d.Declined {
		t.Errorf("after the refusals: %+v, %v; want nothing kept", d, err)
	}
}

// TestMCPDeclineNotServedWithoutStore: a server that keeps no declines
// does not serve their routes, and says so as it does of any route it
// does not serve, which a client tells apart from an unknown question
// (client.Error.NoRoute).
func TestMCPDeclineNotServedWithoutStore(t *testing.T) {
	e := newEnv(t)
	id := e.ask(agentA, "run-decline")
	_, err := e.as(agentA).DeclineInHost(e.ctx(), id, "k")
	if ce := new(client.Error); !errors.As(err, &ce) || !ce.NoRoute() {
		t.Fatalf("decline without a store: %v, want the 404 of a route not served", err)
	}
	_, err = e.as(agentA).HostDeclined(e.ctx(), "aaaaaaaaaaaaaaaaa", "k")
	if ce := new(client.Error); !errors.As(err, &ce) || !ce.NoRoute() {
		t.Fatalf("read without a store: %v, want the 404 of a route not served", err)
	}
	_, err = e.as(agentA).MCPDoor(e.ctx(), "aaaaaaaaaaaaaaaaa")
	if ce := new(client.Error); !errors.As(err, &ce) || ce.Status != http.StatusNotFound || ce.NoRoute() {
		t.Fatalf("an unknown question: %v, want a 404 that is not the route's", err)
	}
}

// TestRetention: every role may read how long the bridge keeps a closed
// question, as the service holds it; before, no agent could, so
// `askbridge mcp` told hosts its tasks never expire.
func TestRetention(t *testing.T) {
	e := newEnv(t)
	for _, tok := range []httpapi.Token{agentA, operator, observer, admin} {
		got, err := e.as(tok).Retention(e.ctx())
		if err != nil || got.Retention != client.Duration(e.svc.Retention()) {
			t.Errorf("%s: %+v, %v; want %s", tok.Name, got, err, e.svc.Retention())
		}
	}
	r := e.do(http.MethodGet, "/v1/retention", &agentA, "")
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil || r.status != http.StatusOK || body["retention"] != e.svc.Retention().String() || len(body) != 1 {
		t.Errorf("the wire: %d %s, want {\"retention\": %q}", r.status, r.body, e.svc.Retention().String())
	}
	if r := e.do(http.MethodGet, "/v1/retention", nil, ""); r.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", r.status)
	}
}
