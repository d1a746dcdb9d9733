package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core/directive"
)

// A reload's tokens and extras apply together, and a bad set changes
// neither.
func TestReconfigureTokensAndExtras(t *testing.T) {
	e := newEnv(t)
	extra := func(tok *httpapi.Token) string {
		r := e.do("GET", "/v1/directive?autonomy=semi&department=data", tok, "")
		if r.status != 200 {
			t.Fatalf("directive: %d %s", r.status, r.body)
		}
		return string(r.body)
	}
	if !strings.Contains(extra(&admin), "Never drop a table") {
		t.Fatal("the extra directive is missing before the reload")
	}
	renewed := httpapi.Token{Name: "root", Secret: "secret-admin-renewed-456789", Role: httpapi.RoleAdmin}
	newExtras := []directive.Extra{{ID: "db", Text: "Ask before any migration.", Scope: directive.ScopeDepartment, Value: "data"}}

	// A token list with a short secret is refused whole: the old admin
	// secret still works and the old extra still shows.
	bad := []httpapi.Token{renewed, {Name: "weak", Secret: "short", Role: httpapi.RoleAgent}}
	if err := e.api.Reconfigure(bad, newExtras); err == nil || !strings.Contains(err.Error(), "tokens[1]") {
		t.Fatalf("Reconfigure(short secret) = %v, want an error naming tokens[1]", err)
	}
	if !strings.Contains(extra(&admin), "Never drop a table") {
		t.Fatal("a refused reconfiguration changed the extras")
	}

	if err := e.api.Reconfigure([]httpapi.Token{renewed, agentA}, newExtras); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/people", &admin, ""); r.status != 401 {
		t.Fatalf("the replaced admin secret: %d, want 401", r.status)
	}
	if r := e.do("GET", "/v1/people", &operator, ""); r.status != 401 {
		t.Fatalf("a removed token: %d, want 401", r.status)
	}
	if got := extra(&renewed); !strings.Contains(got, "Ask before any migration") || strings.Contains(got, "Never drop a table") {
		t.Fatalf("the extras did not change: %s", got)
	}
}

func TestConfigDigest(t *testing.T) {
	e := newEnv(t)
	at := time.Date(2026, 12, 4, 22, 0, 0, 0, time.UTC)
	want := client.ConfigDigest{Digest: strings.Repeat("ab", 32), LoadedAt: at,
		Refused: &client.RefusedConfig{Digest: strings.Repeat("cd", 32), At: at.Add(time.Minute), Error: "routes.ops.deciders.pager: not a surface"}}
	e.api.SetConfigDigest(want)
	r := e.do("GET", "/v1/config/digest", &admin, "")
	if r.status != 200 {
		t.Fatalf("digest as admin: %d %s", r.status, r.body)
	}
	var got client.ConfigDigest
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Digest != want.Digest || !got.LoadedAt.Equal(at) || got.Refused == nil || got.Refused.Error != want.Refused.Error {
		t.Fatalf("digest = %+v, want %+v", got, want)
	}
	for _, tok := range []httpapi.Token{operator, agentA} {
		if r := e.do("GET", "/v1/config/digest", &tok, ""); r.status != 403 {
			t.Fatalf("digest as %s: %d, want 403", tok.Role, r.status)
		}
	}
}

// A question's copy of its route is the bridge's bookkeeping: the digest
// names the route and leaves its settings (deciders' accounts) out.
func TestDigestLeavesTheRouteCopyOut(t *testing.T) {
	e := newEnv(t)
	e.ask(agentA, "run-digest")
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	r := e.do("GET", "/v1/digest?since="+since, &operator, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"route":"default"`) {
		t.Fatalf("digest: %d %s", r.status, r.body)
	}
	if strings.Contains(string(r.body), "asked_route") {
		t.Fatalf("the digest carries the route's copy: %s", r.body)
	}
}
