package app

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

// TestREADMEOIDCConfigLoads keeps the README's OIDC example honest: it
// loads, every person gets the console account a sign-in acts as, and a
// verified email finds its person.
func TestREADMEOIDCConfigLoads(t *testing.T) {
	raw, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "### Sign-in with OpenID Connect")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("the README has no OIDC example")
	}
	env := func(k string) string { return strings.ToLower(k) + "-0123456789abcdef" }
	f, err := parseFile([]byte(example), env)
	if err != nil {
		t.Fatalf("the README's OIDC example does not load: %v", err)
	}
	if f.OIDC == nil || f.OIDC.ClientSecret.Reveal() != "askbridge_oidc_secret-0123456789abcdef" {
		t.Fatalf("the secret was not taken from the environment: %+v", f.OIDC)
	}
	cfg := Settings{File: f}.coreConfig([]byte("k"))
	if _, err := core.New(nil, cfg, nil); err != nil {
		t.Fatalf("core refuses the README's OIDC example: %v", err)
	}
	if ids := cfg.People["alice"].IDs[core.SurfaceConsole]; !slices.Contains(ids, "oidc:alice") {
		t.Fatalf("alice's console accounts: %v", ids)
	}
	pp := &oidcPeople{}
	o := f.OIDC.console(f.People, pp)
	if p, ok := o.People.ByClaim("alice@example.com"); !ok || p != "alice" || !o.People.Exists("alice") || o.People.Exists("mallory") {
		t.Fatalf("by claim: %q %v", p, ok)
	}
	// A reloaded file's people replace them (the reloader's step): alice
	// removed is signed out and cannot sign in again.
	people := maps.Clone(f.People)
	delete(people, "alice")
	pp.replace(f.OIDC, people)
	if _, ok := o.People.ByClaim("alice@example.com"); ok || o.People.Exists("alice") {
		t.Fatal("alice is still found after a reload removed her")
	}
	if o.Roles["sre"] != console.RoleOperator {
		t.Fatalf("roles: %v", o.Roles)
	}
}

// TestOIDCConfigNamesTheBadKey: each mistake in the oidc section is
// refused at load, naming the key.
func TestOIDCConfigNamesTheBadKey(t *testing.T) {
	good := "  issuer: https://login.example.com\n  client_id: askbridge\n  client_secret: s3cret-0123456789\n" +
		"  redirect_url: https://askbridge.example.com/oidc/callback\n  roles: {sre: operator}\n"
	for _, tt := range []struct{ name, yaml, want string }{
		{"plain http issuer", "oidc:\n" + strings.Replace(good, "https://login", "http://login", 1), "oidc.issuer"},
		{"no client id", "oidc:\n" + strings.Replace(good, "client_id: askbridge", "client_id: \"\"", 1), "oidc.client_id"},
		{"no secret", "oidc:\n" + strings.Replace(good, "client_secret: s3cret-0123456789", "client_secret_env: NOPE", 1), "oidc.client_secret_env"},
		{"another callback path", "oidc:\n" + strings.Replace(good, "/oidc/callback", "/callback", 1), "oidc.redirect_url"},
		{"a role that is not", "oidc:\n" + strings.Replace(good, "sre: operator", "sre: root", 1), "oidc.roles.sre"},
		{"no role at all", "oidc:\n" + strings.Replace(good, "  roles: {sre: operator}\n", "", 1), "oidc: roles"},
		{"an email claimed twice", "oidc:\n" + good + "people:\n  a: {email: x@example.com}\n  b: {oidc: X@example.com}\n", "claimed by both"},
		{"oidc key without the section", "people:\n  a: {oidc: a}\n", "people.a.oidc"},
		{"a token named like a sign-in", "tokens:\n  - {name: \"oidc:alice\", role: operator, token: 0123456789abcdef0}\n", "tokens[0].name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFile([]byte(tt.yaml), func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
	if _, err := parseFile([]byte("oidc:\n"+strings.Replace(good, "https://login.example.com", "http://127.0.0.1:9999", 1)), nil); err != nil {
		t.Fatalf("a provider on loopback over http: %v", err)
	}
}

// TestParseFileNamesTheFirstFaultByName: a file with the same fault in
// several entries of one of its maps (a route's deciders, people, routes,
// the oidc section's roles, one email claimed three times) is refused
// for the first entry by name, on every load, not for whichever a map's
// order met first.
func TestParseFileNamesTheFirstFaultByName(t *testing.T) {
	oidc := "oidc:\n  issuer: https://login.example.com\n  client_id: askbridge\n  client_secret: s3cret-0123456789\n" +
		"  redirect_url: https://askbridge.example.com/oidc/callback\n"
	for _, tt := range []struct{ name, yaml, want string }{
		{"deciders on surfaces that are not", "routes: {a: {deciders: {irc: [x], fax: [y], zz: [z]}}}", "routes.a.deciders.fax:"},
		{"people's addresses", "people: {carol: {email: nope}, bob: {email: nah}, dave: {email: no}}", "people.bob.email:"},
		{"people on routes' deciders", "routes: {c: {deciders: {slack: ['person:x']}}, b: {deciders: {slack: ['person:y']}}}", "routes.b.deciders.slack[0]"},
		{"people's oidc without the section", "people: {carol: {oidc: c}, bob: {oidc: b}, dave: {oidc: d}}", "people.bob.oidc"},
		{"roles that are not", oidc + "  roles: {sre: root, ops: boss, dev: king}\n", "oidc.roles.dev:"},
		{"an email claimed three times", oidc + "  roles: {sre: operator}\npeople:\n  c: {oidc: x@example.com}\n  a: {email: x@example.com}\n  b: {email: X@example.com}\n",
			`claimed by both "a" and "b"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for range 30 {
				_, err := parseFile([]byte(tt.yaml), func(string) string { return "" })
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one naming %q", err, tt.want)
				}
			}
		})
	}
}
