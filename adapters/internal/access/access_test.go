package access

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestKeysFindAndReplace(t *testing.T) {
	old := Token{Name: "ops", Secret: strings.Repeat("o", 20), Role: RoleOperator}
	k, err := NewKeys([]Token{old, {Name: "bot", Secret: strings.Repeat("b", 20), Role: RoleAgent}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := k.Find(old.Secret); !ok || got.Name != "ops" || got.Role != RoleOperator {
		t.Fatalf("Find(ops secret) = %v, %v", got, ok)
	}
	if _, ok := k.Find(old.Secret + "x"); ok {
		t.Fatal("a longer secret matched")
	}
	// A bad set is refused whole and the old one stays.
	if err := k.Replace([]Token{{Name: "a", Secret: "short", Role: RoleAdmin}}); err == nil || !strings.Contains(err.Error(), "tokens[0]") {
		t.Fatalf("Replace(short secret) = %v, want an error naming tokens[0]", err)
	}
	if _, ok := k.Find(old.Secret); !ok {
		t.Fatal("a refused Replace dropped the tokens in force")
	}
	renewed := Token{Name: "ops", Secret: strings.Repeat("n", 20), Role: RoleObserver}
	if err := k.Replace([]Token{renewed}); err != nil {
		t.Fatal(err)
	}
	if _, ok := k.Find(old.Secret); ok {
		t.Fatal("the replaced secret still signs in")
	}
	if _, ok := k.Named("bot"); ok {
		t.Fatal("a removed token is still found by name")
	}
	got, ok := k.Named("ops")
	if !ok || got.Role != RoleObserver {
		t.Fatalf("Named(ops) = %v, %v; want the new role", got, ok)
	}
	if got.Stamp() == old.Stamp() {
		t.Fatal("the stamp did not change with the secret")
	}
}

// Lookups during a stream of replacements see one whole set or the
// other: run with -race.
func TestKeysReplaceWhileFinding(t *testing.T) {
	a := []Token{{Name: "a", Secret: strings.Repeat("a", 16), Role: RoleAdmin}}
	b := []Token{{Name: "b", Secret: strings.Repeat("b", 16), Role: RoleAgent}}
	k, err := NewKeys(a)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			if err := k.Replace([][]Token{a, b}[i%2]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 200 {
		ta, okA := k.Find(a[0].Secret)
		tb, okB := k.Find(b[0].Secret)
		if okA && ta.Role != RoleAdmin || okB && tb.Role != RoleAgent {
			t.Fatalf("a lookup saw a token with another's role: %v %v", ta, tb)
		}
	}
	wg.Wait()
}

func TestTokenNeverPrintsItsSecret(t *testing.T) {
	tok := Token{Name: "ops", Secret: "s3cret-s3cret-s3cret", Role: RoleOperator}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, tok)} {
		if strings.Contains(s, tok.Secret) {
			t.Fatalf("%q shows the secret", s)
		}
	}
}

func TestRoles(t *testing.T) {
	for _, r := range []Role{RoleAgent, RoleOperator, RoleObserver, RoleAdmin} {
		if got, err := ParseRole(string(r)); err != nil || got != r {
			t.Fatalf("ParseRole(%q) = %q, %v", r, got, err)
		}
	}
	if _, err := ParseRole("root"); err == nil {
		t.Fatal("ParseRole(root) took it")
	}
	if !RoleAdmin.Includes(RoleAgent) || RoleOperator.Includes(RoleAdmin) || RoleObserver.MayAnswer() || !RoleOperator.MayAnswer() {
		t.Fatal("role inclusion is wrong")
	}
}

// TestKeysFollowTheConfiguration: Keys that follow a configuration
// (core's Service.Tokens) take the Ring it carries in place of their
// own, and go from one carried Ring to the next as the configuration
// does, so the tokens change in the configuration's one swap. Replace
// then refuses, rather than change a set nobody reads.
func TestKeysFollowTheConfiguration(t *testing.T) {
	own := Token{Name: "own", Secret: strings.Repeat("o", 20), Role: RoleOperator}
	carriedTok := Token{Name: "carried", Secret: strings.Repeat("c", 20), Role: RoleAgent}
	k, err := NewKeys([]Token{own})
	if err != nil {
		t.Fatal(err)
	}
	var config atomic.Value // what core's configuration in force carries
	config.Store((*Ring)(nil))
	k.Follow(func() any { return config.Load() })
	if _, ok := k.Find(own.Secret); !ok {
		t.Fatal("with no Ring carried, the Keys' own tokens are not in force")
	}
	ring, err := NewRing([]Token{carriedTok})
	if err != nil {
		t.Fatal(err)
	}
	config.Store(ring)
	if _, ok := k.Find(own.Secret); ok {
		t.Fatal("the Keys' own token is still in force beside the carried Ring")
	}
	if got, ok := k.Find(carriedTok.Secret); !ok || got.Role != RoleAgent {
		t.Fatalf("Find(carried secret) = %v, %v", got, ok)
	}
	if _, ok := k.Named("carried"); !ok {
		t.Fatal("the carried token is not found by name")
	}
	if err := k.Replace([]Token{own}); err == nil {
		t.Fatal("Replace took tokens while the configuration's are in force")
	}
	if _, ok := k.Find(carriedTok.Secret); !ok {
		t.Fatal("a refused Replace changed the tokens in force")
	}
	if _, err := NewRing([]Token{{Name: "x", Secret: "short", Role: RoleAdmin}}); err == nil {
		t.Fatal("NewRing took a short secret")
	}
}
