package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestWrongBearerTokensRunOut: a client that presents wrong tokens is
// told to slow down (429 with Retry-After) once it has used its burst of
// them, as the console's sign-in does, so the API is no faster a way to
// guess a token than the sign-in form.
func TestWrongBearerTokensRunOut(t *testing.T) {
	e := newEnv(t)
	wrong := httpapi.Token{Name: "guess", Secret: "not-a-token-of-ours-000"}
	var limited *raw
	for i := range 31 {
		wrong.Secret = "not-a-token-of-ours-" + strconv.Itoa(i)
		r := e.do("GET", "/v1/people", &wrong, "")
		switch r.status {
		case http.StatusUnauthorized:
		case http.StatusTooManyRequests:
			limited = &r
		default:
			t.Fatalf("wrong token %d: %d %s", i, r.status, r.body)
		}
	}
	if limited == nil {
		t.Fatal("31 wrong tokens from one address, and not one 429")
	}
	if secs, err := strconv.Atoi(limited.header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After %q, want whole seconds", limited.header.Get("Retry-After"))
	}
	if d := errorOf(t, *limited); d.Code != core.CodeForbidden {
		t.Fatalf("429 body: %+v", d)
	}
	// No token at all is no guess: still 401, with the challenge.
	if r := e.do("GET", "/v1/people", nil, ""); r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %d %v", r.status, r.header)
	}
}

// guessEnv is an API behind a trusted proxy (the test's own address), so
// that a request names its client in X-Forwarded-For, keeping its budgets
// of wrong tokens in budgets.
func guessEnv(t *testing.T, budgets core.Budget, clock core.Clock) (*httpapi.Server, *httptest.Server) {
	t.Helper()
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: coretest.APIRoutes(), Clock: clock})
	api, err := httpapi.New(svc, httpapi.Options{Tokens: tokens, Log: zerolog.Nop(), Guesses: budgets,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return api, srv
}

// from sends GET /v1/people with secret as the client at addr.
func from(t *testing.T, srv *httptest.Server, addr, secret string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/v1/people", nil)
	req.Header.Set("X-Forwarded-For", addr)
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestOnlyWrongTokensSpendTheBudget: right tokens spend nothing, however
// many; wrong ones spend the budget of their client alone; once it is
// spent, that client is refused before its token is looked at, right or
// wrong (a 200 for the right one would tell a guesser which guess was
// right), until Retry-After has passed, except for a token already found
// from that client. Doors outside /v1 (the MCP
// endpoint, the metrics) spend from the same budget through Admit.
func TestOnlyWrongTokensSpendTheBudget(t *testing.T) {
	// The budgets are a store's on a clock that moves only when the test
	// says, so that a slow run refills none mid-test; replicas share them,
	// and the services time their holds on the same clock.
	clock := core.NewSimClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	budgets := coretest.OpenStoreOn(t, clock.Now)
	api, srv := guessEnv(t, budgets, clock)
	_, replica := guessEnv(t, budgets, clock)
	const guesser, neighbour, agentHost = "203.0.113.66", "198.51.100.7", "192.0.2.10"

	for i := range 100 {
		if r := from(t, srv, agentHost, agentA.Secret); r.StatusCode != http.StatusForbidden { // an agent may not list people
			t.Fatalf("right token %d: %d", i, r.StatusCode)
		}
		if r := from(t, srv, guesser, operator.Secret); r.StatusCode != http.StatusOK {
			t.Fatalf("right token %d from the guesser's address: %d", i, r.StatusCode)
		}
	}
	// The guesser's right requests spent nothing: its whole burst of
	// wrong ones is still there.
	for i := range 30 {
		if r := from(t, srv, guesser, "not-a-token-of-ours-"+strconv.Itoa(i)); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token %d within the burst: %d", i, r.StatusCode)
		}
	}
	r := from(t, srv, guesser, "not-a-token-of-ours-31")
	if r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the 31st wrong token: %d, want 429", r.StatusCode)
	}
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs != 2 {
		t.Fatalf("Retry-After %q, want the 2s until the next guess", r.Header.Get("Retry-After"))
	}
	// Now a right token never found from there is refused too: it is not
	// looked at. One already found from there passes (it tells a guesser
	// nothing): the agents beside a process presenting a rotated token
	// keep working.
	if r := from(t, srv, guesser, agentA.Secret); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a right token never found from a client out of guesses: %d, want 429", r.StatusCode)
	}
	if r := from(t, srv, guesser, operator.Secret); r.StatusCode != http.StatusOK {
		t.Fatalf("a right token found before from a client out of guesses: %d, want 200", r.StatusCode)
	}
	// Another client, and the agents, are not held by the guesser.
	if r := from(t, srv, neighbour, operator.Secret); r.StatusCode != http.StatusOK {
		t.Fatalf("another client's right token: %d", r.StatusCode)
	}
	if r := from(t, srv, neighbour, "not-a-token-of-ours-x"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("another client's wrong token: %d, want 401", r.StatusCode)
	}

	// Another replica sharing the store refuses the guesser's next wrong
	// token at once.
	if r := from(t, replica, guesser, "not-a-token-of-ours-32"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the next wrong token on another replica: %d, want 429", r.StatusCode)
	}

	// A door outside /v1 reads the same budget.
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.RemoteAddr = "127.0.0.1:4000"
	req.Header.Set("X-Forwarded-For", guesser)
	req.Header.Set("Authorization", "Bearer "+agentA.Secret)
	if _, wait, ok := api.Admit(req); ok || wait <= 0 {
		t.Fatalf("Admit from the guesser: ok %v, wait %s", ok, wait)
	}
	rec := httptest.NewRecorder()
	if status, err := httpapi.AuthRefusal(rec, time.Second); status != http.StatusTooManyRequests ||
		rec.Header().Get("Retry-After") != "1" || core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("AuthRefusal(1s): %d %v %v", status, rec.Header(), err)
	}
	req.Header.Set("X-Forwarded-For", agentHost)
	if tok, _, ok := api.Admit(req); !ok || tok.Name != agentA.Name {
		t.Fatalf("Admit from the agent's host: %v %v", tok, ok)
	}

	// Once Retry-After has passed, any right token works from there.
	clock.Advance(time.Duration(secs) * time.Second)
	if r := from(t, srv, guesser, agentA.Secret); r.StatusCode != http.StatusForbidden { // an agent may not list people
		t.Fatalf("a right token after Retry-After: %d", r.StatusCode)
	}
}
