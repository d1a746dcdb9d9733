package app

import (
	"errors"
	"net/http"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestReloadSwapsTokensWithTheRoutes: a reload puts the file's tokens in
// force in the same step as its routes, so no request meets one file's
// tokens and the other's routes. The test stands a request where the
// reload's core swap has just happened (apply runs check, then
// Service.Reconfigure, with nothing between them but this): a token the
// new file removed must be refused there, and one it added must be
// admitted to the route it added. Before, the tokens were swapped after
// the routes, by a second call (the API's Reconfigure), so a request
// there was let in by the removed token under the new routes, and the
// added token was refused while its route already applied.
func TestReloadSwapsTokensWithTheRoutes(t *testing.T) {
	const oldSecret, newSecret = "old-agent-token-0123456789", "new-agent-token-0123456789"
	const actorKey = "reload-swap-test-actor-key"
	anyone := map[string][]string{"api": {"*"}}
	before := File{Tokens: []TokenFile{{Name: "old-agent", Role: "agent", Token: oldSecret}},
		Routes: map[string]RouteFile{"before": {Deciders: anyone}}}
	after := File{Tokens: []TokenFile{{Name: "new-agent", Role: "agent", Token: newSecret}},
		Routes: map[string]RouteFile{"after": {Deciders: anyone}}}

	m := &Main{Settings: Settings{DataDir: t.TempDir(), Addr: "127.0.0.1:0", ActorKey: actorKey, File: before},
		Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)}
	if err := m.Run(t.Context()); err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Cleanup(func() {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		m.Close()
	})
	r := &reloader{m: m, getenv: func(string) string { return "" }, actorKey: []byte(actorKey), file: before, start: before}

	ask := func(secret string) error {
		_, err := client.New(m.URL, secret).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification,
			Question: "Which region?", Reversibility: core.Reversible, Route: "after", RunID: "run-1"})
		return err
	}
	status := func(err error) int {
		var apiErr *client.Error
		if errors.As(err, &apiErr) {
			return apiErr.Status
		}
		return 0
	}

	cfg, err := r.check(after)
	if err != nil {
		t.Fatalf("the new file was refused: %v", err)
	}
	if err := m.Service.Reconfigure(cfg); err != nil { // the reload's core swap, as apply makes it
		t.Fatal(err)
	}
	if _, ok := m.Service.Route("after"); !ok {
		t.Fatal("the new route is not in force after the core swap")
	}
	if err := ask(oldSecret); status(err) != http.StatusUnauthorized {
		t.Errorf("the token the new file removed, asking on the route it added: %v; want 401 (the new file's tokens are in force with its routes)", err)
	}
	if err := ask(newSecret); err != nil {
		t.Errorf("the token the new file added, asking on the route it added: %v; want it asked (its route is in force, so is it)", err)
	}
}
