package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func TestRoles(t *testing.T) {
	e := newEnvOn(t, coretest.OpenStore(t), withDeclines)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	const askBody = `{"kind":"clarification","question":"q?","reversibility":"reversible","run_id":"run-roles"}`
	const (
		ok      = 200
		created = 201
		no      = 403
		unknown = 404
	)
	// Each route with the status each role gets. Question routes act on a
	// fresh question asked by agent-a, which the agent-a token owns. The
	// MCP door is the asking agent's host's: an admin's token may use it,
	// for its own questions alone, so agent-a's reads as unknown
	// (TestTheHostDoorIsTheAskersOwnForAnAdminToo).
	routes := []struct {
		name, method, path, body       string
		agent, operator, observer, adm int
	}{
		{"ask", "POST", "/v1/questions", askBody, created, no, no, created},
		{"list", "GET", "/v1/questions?state=open", "", no, ok, ok, ok},
		{"get", "GET", "/v1/questions/{id}", "", ok, ok, ok, ok},
		{"wait", "GET", "/v1/questions/{id}/wait?timeout=0s", "", ok, no, no, ok},
		{"answer", "POST", "/v1/questions/{id}/answer", `{"answer":"yes"}`, no, ok, no, ok},
		{"decline", "POST", "/v1/questions/{id}/decline", "", no, ok, no, ok},
		{"cancel", "POST", "/v1/questions/{id}/cancel", `{"reason":"done"}`, ok, ok, no, ok},
		{"end run", "POST", "/v1/runs/{run}/end", "", ok, no, no, ok},
		{"events", "GET", "/v1/events?follow=false", "", no, ok, ok, ok},
		{"digest", "GET", "/v1/digest?since=" + since, "", no, ok, ok, ok},
		{"directive", "GET", "/v1/directive?autonomy=semi", "", ok, ok, ok, ok},
		{"mcp door", "GET", "/v1/questions/{id}/mcp", "", ok, no, no, unknown},
		{"mcp answer", "POST", "/v1/questions/{id}/mcp/answer", `{"answer":"yes"}`, ok, no, no, unknown},
		{"mcp decline", "POST", "/v1/questions/{id}/mcp/decline", `{"key":"k"}`, ok, no, no, unknown},
		{"mcp declined", "GET", "/v1/questions/{id}/mcp/decline?key=k", "", ok, no, no, unknown},
		{"retention", "GET", "/v1/retention", "", ok, ok, ok, ok},
		{"people", "GET", "/v1/people", "", no, ok, ok, ok},
		{"config digest", "GET", "/v1/config/digest", "", no, no, no, ok},
	}
	n := 0
	for _, rt := range routes {
		for _, c := range []struct {
			tok  httpapi.Token
			want int
		}{{agentA, rt.agent}, {operator, rt.operator}, {observer, rt.observer}, {admin, rt.adm}} {
			n++
			run := fmt.Sprintf("run-%d", n)
			path := strings.NewReplacer("{id}", string(e.ask(agentA, core.RunID(run))), "{run}", run).Replace(rt.path)
			r := e.do(rt.method, path, &c.tok, rt.body)
			if r.status != c.want {
				t.Errorf("%s as %s: %d %s, want %d", rt.name, c.tok.Role, r.status, r.body, c.want)
				continue
			}
			if c.want == no {
				d := errorOf(t, r)
				if d.Code != "forbidden" || !strings.Contains(d.Message, string(c.tok.Role)) {
					t.Errorf("%s as %s: %s", rt.name, c.tok.Role, r.body)
				}
			}
		}
		// Without a token, or with a wrong one, every /v1 route is 401.
		for _, tok := range []*httpapi.Token{nil, {Secret: "secret-that-nobody-holds"}} {
			r := e.do(rt.method, strings.NewReplacer("{id}", "aaaaaaaaaaaaaaaaa", "{run}", "r").Replace(rt.path), tok, rt.body)
			if r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s without a valid token: %d %s", rt.name, r.status, r.body)
			}
		}
	}
}

func TestAuthAndRouting(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		name string
		hdr  []string
		want int
	}{
		{"lower-case scheme", []string{"Authorization", "bearer " + operator.Secret}, 200},
		{"basic scheme", []string{"Authorization", "Basic " + operator.Secret}, 401},
		{"secret prefix", []string{"Authorization", "Bearer " + operator.Secret[:10]}, 401},
		{"secret plus more", []string{"Authorization", "Bearer " + operator.Secret + "x"}, 401},
	} {
		r := e.do("GET", "/v1/questions", nil, "", c.hdr...)
		if r.status != c.want {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	// Unknown routes and methods under /v1 answer in the API's shape.
	r := e.do("GET", "/v1/nothing", &operator, "")
	if r.status != 404 || errorOf(t, r).Code != "not_found" {
		t.Errorf("unknown route: %d %s", r.status, r.body)
	}
	r = e.do("DELETE", "/v1/questions", &operator, "")
	if r.status != 405 || !strings.Contains(r.header.Get("Allow"), "POST") || errorOf(t, r).Code != "invalid" {
		t.Errorf("wrong method: %d %v %s", r.status, r.header, r.body)
	}
	// Probes need no token.
	if r := e.do("GET", "/healthz", nil, ""); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
	if r := e.do("GET", "/readyz", nil, ""); r.status != 200 {
		t.Errorf("readyz: %d %s", r.status, r.body)
	}
	_ = e.store.Close()
	if r := e.do("GET", "/readyz", nil, ""); r.status != 503 || errorOf(t, r).Code != "internal" {
		t.Errorf("readyz with the store closed: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/healthz", nil, ""); r.status != 200 {
		t.Errorf("healthz with the store closed: %d", r.status)
	}
	// An internal error says nothing of its cause, and is logged.
	r = e.do("GET", "/v1/questions/aaaaaaaaaaaaaaaaa", &operator, "")
	if d := errorOf(t, r); r.status != 500 || d.Code != "internal" || d.Message != "internal error" {
		t.Errorf("store closed: %d %s", r.status, r.body)
	}
	if !strings.Contains(e.logs.String(), `"level":"error"`) {
		t.Errorf("the internal error was not logged:\n%s", e.logs)
	}
}

func TestLogsCarryNoSecretsOrBodies(t *testing.T) {
	e := newEnv(t)
	id := e.ask(agentA, "run-1")
	const secretAnswer = "the-launch-code-is-0000"
	r := e.do("POST", "/v1/questions/"+string(id)+"/answer", &operator, `{"answer":"`+secretAnswer+`"}`)
	if r.status != 200 {
		t.Fatalf("answer: %d %s", r.status, r.body)
	}
	e.do("GET", "/v1/questions", &httpapi.Token{Secret: "wrong-secret-0123456789"}, "")
	logs := e.logs.String()
	for _, tok := range tokens {
		if strings.Contains(logs, tok.Secret) {
			t.Errorf("the log holds %s's secret", tok.Name)
		}
	}
	for _, s := range []string{secretAnswer, "Which database", "wrong-secret"} {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %q", s)
		}
	}
	for _, s := range []string{`"token":"ops-alice"`, `"path":"/v1/questions/` + string(id) + `/answer"`, `"status":200`, `"method":"POST"`, `"duration"`} {
		if !strings.Contains(logs, s) {
			t.Errorf("the access log lacks %s:\n%s", s, logs)
		}
	}
	// Formatting a token by mistake does not print its secret either.
	for _, s := range []string{fmt.Sprint(operator), fmt.Sprintf("%+v", operator), fmt.Sprintf("%#v", operator)} {
		if strings.Contains(s, operator.Secret) {
			t.Errorf("formatted token shows its secret: %s", s)
		}
	}
	var b strings.Builder
	logger := zerolog.New(&b)
	logger.Info().Object("token", operator).Msg("")
	if strings.Contains(b.String(), operator.Secret) || !strings.Contains(b.String(), operator.Name) {
		t.Errorf("logged token: %s", b.String())
	}
}

func TestOptionsValidate(t *testing.T) {
	good := httpapi.Token{Name: "a", Secret: "0123456789abcdef", Role: httpapi.RoleAgent}
	for _, c := range []struct {
		name string
		toks []httpapi.Token
		want string
	}{
		{"no name", []httpapi.Token{{Secret: good.Secret, Role: httpapi.RoleAgent}}, "name is required"},
		{"short secret", []httpapi.Token{{Name: "a", Secret: "short", Role: httpapi.RoleAgent}}, "at least 16"},
		{"bad role", []httpapi.Token{{Name: "a", Secret: good.Secret, Role: "root"}}, `role "root"`},
		{"same name", []httpapi.Token{good, {Name: "a", Secret: good.Secret + "x", Role: httpapi.RoleAgent}}, "used twice"},
		{"same secret", []httpapi.Token{good, {Name: "b", Secret: good.Secret, Role: httpapi.RoleAgent}}, "another token"},
	} {
		err := httpapi.Options{Tokens: c.toks}.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
		// New refuses the same options with the same error, and no server.
		if srv, nerr := httpapi.New(nil, httpapi.Options{Tokens: c.toks}); srv != nil || nerr == nil || nerr.Error() != err.Error() {
			t.Errorf("%s: New returned %v, %v", c.name, srv, nerr)
		}
		if err != nil && strings.Contains(err.Error(), good.Secret) {
			t.Errorf("%s: the error shows a secret: %v", c.name, err)
		}
	}
	if err := (httpapi.Options{Tokens: []httpapi.Token{good}}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestHandleMountsBesideTheAPI(t *testing.T) {
	e := newEnv(t)
	srv, err := httpapi.New(e.svc, httpapi.Options{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle("GET /mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("mcp")) }))
	srv.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("console")) }))
	srv.Handle("GET /v1/extra", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("extra")) }))
	serve := func(method, path string, tok *httpapi.Token) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if tok != nil {
			req.Header.Set("Authorization", "Bearer "+tok.Secret)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	for _, c := range []struct {
		method, path string
		tok          *httpapi.Token
		status       int
		body         string
	}{
		{"GET", "/mcp", nil, 200, "mcp"},
		{"GET", "/", nil, 200, "console"},
		{"GET", "/console/page", nil, 200, "console"},
		{"GET", "/v1/extra", nil, 401, ""},
		{"GET", "/v1/extra", &observer, 200, "extra"},
		// A handler at "/" does not take unknown /v1 paths or methods.
		{"GET", "/v1/nothing", &observer, 404, `"no such route"`},
		{"DELETE", "/v1/questions", &observer, 405, `"invalid"`},
		{"GET", "/healthz", nil, 200, "ok"},
	} {
		rec := serve(c.method, c.path, c.tok)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.body) {
			t.Errorf("%s %s: %d %q", c.method, c.path, rec.Code, rec.Body.String())
		}
	}
	// A mounted handler can take the API's tokens.
	req := httptest.NewRequest("GET", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+observer.Secret)
	if tok, ok := srv.Authenticate(req); !ok || tok.Name != observer.Name || tok.Role != httpapi.RoleObserver {
		t.Errorf("Authenticate: %v %v", tok, ok)
	}
	req.Header.Set("Authorization", "Bearer nope")
	if _, ok := srv.Authenticate(req); ok {
		t.Error("Authenticate accepted an unknown secret")
	}
}

// TestAccessLogBoundsThePath: a request needs no token to be logged, so
// the access log quotes at most the first 256 bytes of its path; before,
// a path as long as the header limit went into the line whole.
func TestAccessLogBoundsThePath(t *testing.T) {
	e := newEnv(t)
	path := "/v1/" + strings.Repeat("a", 8000)
	if r := e.do(http.MethodGet, path, nil, ""); r.status != http.StatusUnauthorized {
		t.Fatalf("an unauthenticated long path: %d, want 401", r.status)
	}
	want := path[:256] + "…"
	if lines := accessLines(t, e, want); len(lines) != 1 || lines[0].Status != http.StatusUnauthorized {
		t.Fatalf("access log lines quoting the path's first 256 bytes: %+v\n%.2000s", lines, e.logs)
	}
}

// TestAccessLogBoundsTheMethod: net/http takes any token as a method,
// as long as the header limit allows, and a request needs no token to be
// logged, so the access log quotes at most the first 32 bytes of its
// method, as it bounds the path; before, the method went into the line
// whole.
func TestAccessLogBoundsTheMethod(t *testing.T) {
	e := newEnv(t)
	method := strings.Repeat("M", 8000)
	if r := e.do(method, "/v1/questions", nil, ""); r.status != http.StatusUnauthorized {
		t.Fatalf("an unauthenticated long method: %d, want 401", r.status)
	}
	lines := accessLines(t, e, "/v1/questions")
	if len(lines) != 1 {
		t.Fatalf("%d access log lines of the request, want 1", len(lines))
	}
	if got, want := lines[0].Method, method[:32]+"…"; got != want || lines[0].Status != http.StatusUnauthorized {
		t.Fatalf("the access log quotes the method as %.64q... (%d bytes), status %d; want its first 32 bytes, %q",
			got, len(got), lines[0].Status, want)
	}
}
