package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/directive"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/logbuf"
)

// The test tokens, one per role, and a second agent.
var (
	agentA   = httpapi.Token{Name: "agent-a", Secret: "secret-agent-a-0123456789", Role: httpapi.RoleAgent}
	agentB   = httpapi.Token{Name: "agent-b", Secret: "secret-agent-b-0123456789", Role: httpapi.RoleAgent}
	operator = httpapi.Token{Name: "ops-alice", Secret: "secret-operator-0123456789", Role: httpapi.RoleOperator}
	observer = httpapi.Token{Name: "watcher", Secret: "secret-observer-0123456789", Role: httpapi.RoleObserver}
	admin    = httpapi.Token{Name: "root", Secret: "secret-admin-000123456789", Role: httpapi.RoleAdmin}
	tokens   = []httpapi.Token{agentA, agentB, operator, observer, admin}
)

// watchedStore is the real bolt store, with a note sent each time a waiter
// starts watching a question, so a test can answer once the waiter is
// parked rather than guessing with a sleep, and one each time a waiter
// stops, so a test can see a waiter freed.
type watchedStore struct {
	core.Store
	watching chan core.QuestionID
	stopped  chan core.QuestionID
}

func (s *watchedStore) Watch(id core.QuestionID) (<-chan struct{}, func()) {
	ch, stop := s.Store.Watch(id)
	return ch, s.noted(id, stop)
}

// WatchFunc is the store's own (core.Store.WatchFunc), noted as Watch is, so
// core's watchers call back as they do on the store itself.
func (s *watchedStore) WatchFunc(id core.QuestionID, wake func()) func() {
	return s.noted(id, s.Store.WatchFunc(id, wake))
}

// noted notes that id is watched, and returns stop noting when it stops.
func (s *watchedStore) noted(id core.QuestionID, stop func()) func() {
	select {
	case s.watching <- id:
	default:
	}
	return func() {
		stop()
		select {
		case s.stopped <- id:
		default:
		}
	}
}

type env struct {
	t        *testing.T
	store    *watchedStore
	svc      *core.Service
	api      *httpapi.Server
	srv      *httptest.Server
	logs     *logbuf.Buffer
	clients  map[string]*client.Client
	deadline time.Duration
}

// newEnv runs the API over a bolt store in a temp dir, on a real HTTP
// listener.
func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvOn(t, coretest.OpenStore(t))
}

// newEnvOn runs the API over st, for the tests that hold on every store;
// with, if given, change the API's options first.
func newEnvOn(t *testing.T, st core.Store, with ...func(*core.Service, *httpapi.Options)) *env {
	t.Helper()
	ws := &watchedStore{Store: st, watching: make(chan core.QuestionID, 64), stopped: make(chan core.QuestionID, 64)}
	routes := coretest.APIRoutes()
	// agent-a's MCP host (and admin's) may answer on the default route.
	routes[core.DefaultRoute].Deciders[core.SurfaceMCP] = []string{"agent-a", "root"}
	routes["locked"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"someone-else"}}}
	routes["leads"] = core.Route{People: []string{"person:alice"}}
	routes["by-role"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceSlack: {"role:S-leads"}}}
	// guarded's policy rules decide some approvals at the ask (policy_test.go).
	routes["guarded"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, Rules: []core.Rule{
		{Name: "network", When: `tool == "fetch"`, Decide: core.DecideDeny, Reason: "No network access from this repository."},
		{When: `tool == "read_file"`, Decide: core.DecideAllow},
	}}
	svc := coretest.Service(t, ws, coretest.Options{Routes: routes, People: map[string]core.Person{
		"alice": {DisplayName: "Alice", IDs: map[core.Surface][]string{core.SurfaceSlack: {"U-alice"}}},
	}})
	logs := &logbuf.Buffer{}
	opts := httpapi.Options{
		Tokens:  tokens,
		Log:     zerolog.New(logs).Level(zerolog.DebugLevel),
		MaxWait: time.Minute,
		Extras:  []directive.Extra{{ID: "db", Text: "Never drop a table without asking.", Scope: directive.ScopeDepartment, Value: "data"}},
	}
	for _, f := range with {
		f(svc, &opts)
	}
	h, err := httpapi.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &env{t: t, store: ws, svc: svc, api: h, srv: srv, logs: logs, clients: map[string]*client.Client{}, deadline: 30 * time.Second}
	for _, tok := range tokens {
		e.clients[tok.Name] = client.New(srv.URL, tok.Secret, client.WithHTTPClient(srv.Client()))
	}
	return e
}

// as returns a client presenting tok.
func (e *env) as(tok httpapi.Token) *client.Client { return e.clients[tok.Name] }

// ctx bounds a test step so that a broken wake-up fails the test instead
// of hanging it. It is a guard, not a timing assertion.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), e.deadline)
	e.t.Cleanup(cancel)
	return ctx
}

// raw is one HTTP exchange, for what the client hides: statuses, exact
// bodies, headers.
type raw struct {
	status int
	header http.Header
	body   []byte
}

func (e *env) do(method, path string, tok *httpapi.Token, body string, hdr ...string) raw {
	e.t.Helper()
	return e.doOn(e.srv.Client(), e.srv.URL, method, path, tok, body, hdr...)
}

// doOn is do with client c, at base (another server in front of the
// API, say).
func (e *env) doOn(c *http.Client, base, method, path string, tok *httpapi.Token, body string, hdr ...string) raw {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.ctx(), method, base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if tok != nil {
		req.Header.Set("Authorization", "Bearer "+tok.Secret)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1]) // a name given twice is sent twice
	}
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return raw{status: resp.StatusCode, header: resp.Header, body: b}
}

// errorOf decodes an error body, failing the test if it is not one.
func errorOf(t *testing.T, r raw) client.ErrorDetail {
	t.Helper()
	var eb client.ErrorBody
	if err := json.Unmarshal(r.body, &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("not an error body (status %d): %s", r.status, r.body)
	}
	return eb.Error
}

// calls numbers tool calls, so that asks meant as different questions are
// not repeats of one another (an ask is idempotent per run and tool call).
var calls atomic.Int64

func nextCall() string { return fmt.Sprintf("toolu_%03d", calls.Add(1)) }

// clarification is a valid ask of the simplest kind.
func clarification(run core.RunID) client.AskRequest {
	return client.AskRequest{
		Kind:          core.KindClarification,
		Question:      "Which database should the service use?",
		Context:       "We have Postgres in prod and SQLite in tests.",
		Reversibility: core.HardToReverse,
		RunID:         run,
		ToolCallID:    "toolu_01",
		Timeout:       client.Duration(30 * time.Minute),
	}
}

// ask parks a clarification as tok and returns its id.
func (e *env) ask(tok httpapi.Token, run core.RunID) core.QuestionID {
	e.t.Helper()
	req := clarification(run)
	req.ToolCallID = nextCall()
	q, err := e.as(tok).Ask(e.ctx(), req)
	if err != nil {
		e.t.Fatal(err)
	}
	return q.ID
}

// parked waits until a waiter watches id (the store has been asked to
// wake it).
func (e *env) parked(id core.QuestionID) {
	e.t.Helper()
	ctx := e.ctx()
	for {
		select {
		case got := <-e.store.watching:
			if got == id {
				return
			}
		case <-ctx.Done():
			e.t.Fatalf("no waiter parked on %s", id)
		}
	}
}
