// Package access is who may do what, in one place for every door that
// takes a bearer token: the roles, the tokens, and the one constant-time
// lookup of a presented secret. The API and the console read the same
// Keys, which follow the tokens core's configuration carries, so a
// reload changes the tokens of both with the routes, at once.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/askbridge/askbridge/core"
	"github.com/rs/zerolog"
)

// Role is what a token may do.
type Role string

const (
	// RoleAgent asks questions, and reads, waits on and cancels its own;
	// it ends its own runs. The token's name is the asking agent. The
	// console refuses it.
	RoleAgent Role = "agent"
	// RoleOperator lists, reads, answers, declines and withdraws any
	// question, and reads events and digests.
	RoleOperator Role = "operator"
	// RoleObserver only reads: questions, events, digests, the directive.
	RoleObserver Role = "observer"
	// RoleAdmin holds every role.
	RoleAdmin Role = "admin"
)

func (r Role) String() string { return string(r) }

// ParseRole accepts exactly the four role names.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleAgent, RoleOperator, RoleObserver, RoleAdmin:
		return r, nil
	}
	return "", fmt.Errorf("role %q is not one of agent, operator, observer, admin", s)
}

// Includes reports whether a token with role r may act as want.
func (r Role) Includes(want Role) bool { return r == RoleAdmin || r == want }

// Held are the names a route's "role:<name>" decider entry matches for a
// token with role r (core.Decider.Roles), on the API and the console
// alike: its own, and for an admin an operator's too, as Includes has it.
func (r Role) Held() []string {
	if r == RoleAdmin {
		return []string{string(RoleAdmin), string(RoleOperator)}
	}
	return []string{string(r)}
}

// MayAnswer reports whether the role may answer and decline at all; the
// route's deciders are checked on top, in core.
func (r Role) MayAnswer() bool { return r == RoleOperator || r == RoleAdmin }

// MayWithdraw reports whether the role may withdraw (cancel) any agent's
// question; an agent withdraws only its own. The API and the console
// both ask this, so a person is refused on neither what the other allows.
func (r Role) MayWithdraw() bool { return r == RoleOperator || r == RoleAdmin }

// Token is one bearer token. Name identifies it in logs and answers (an
// agent token's name is the asking agent); Secret is what the caller
// presents and is never logged or printed.
type Token struct {
	Name   string
	Secret string
	Role   Role
}

// Agent is the agent an agent token speaks for: its name.
func (t Token) Agent() core.AgentID { return core.AgentID(t.Name) }

// String names the token without its secret, so a token passed to a
// formatter or logger by mistake does not leak it.
func (t Token) String() string { return t.Name + " (" + string(t.Role) + ")" }

// GoString keeps %#v from printing the secret too.
func (t Token) GoString() string {
	return fmt.Sprintf("access.Token{Name:%q, Secret:REDACTED, Role:%q}", t.Name, t.Role)
}

// MarshalZerologObject logs the token's name and role, never its secret.
func (t Token) MarshalZerologObject(e *zerolog.Event) {
	e.Str("name", t.Name).Str("role", string(t.Role))
}

// Stamp names the token's secret without revealing it: it changes when
// the secret does, so a console session ends when its token is given a
// new secret.
func (t Token) Stamp() string {
	sum := sha256.Sum256(append([]byte("askbridge console stamp\x00"), t.Secret...))
	return hex.EncodeToString(sum[:8])
}

// minSecretLen keeps guessable secrets out of configuration.
const minSecretLen = 16

// Validate checks a token list: every token named, with a real secret
// and a known role, and no name or secret used twice.
func Validate(tokens []Token) error {
	names, secrets := map[string]bool{}, map[string]bool{}
	for i, t := range tokens {
		if strings.TrimSpace(t.Name) == "" {
			return fmt.Errorf("tokens[%d].name is required", i)
		}
		if len(t.Name) > 128 {
			return fmt.Errorf("tokens[%d].name is longer than 128 bytes", i)
		}
		if len(t.Secret) < minSecretLen {
			return fmt.Errorf("tokens[%d] (%s): the secret must be at least %d characters", i, t.Name, minSecretLen)
		}
		if _, err := ParseRole(string(t.Role)); err != nil {
			return fmt.Errorf("tokens[%d] (%s): %v", i, t.Name, err)
		}
		if names[t.Name] {
			return fmt.Errorf("tokens[%d]: name %q is used twice", i, t.Name)
		}
		if secrets[t.Secret] {
			return fmt.Errorf("tokens[%d] (%s): the secret is used by another token", i, t.Name)
		}
		names[t.Name], secrets[t.Secret] = true, true
	}
	return nil
}

// Ring is one checked token set, as a configuration carries it
// (core.Config.Tokens). Secrets are kept as SHA-256 sums and compared in
// constant time against every token, so neither the length of a secret
// nor which token matched shows in the timing. A Ring never changes.
type Ring struct {
	tokens []Token
	sums   [][sha256.Size]byte
}

// NewRing checks tokens (Validate) and returns them as a Ring.
func NewRing(tokens []Token) (*Ring, error) {
	if err := Validate(tokens); err != nil {
		return nil, err
	}
	r := &Ring{tokens: append([]Token(nil), tokens...)}
	for _, t := range tokens {
		r.sums = append(r.sums, sha256.Sum256([]byte(t.Secret)))
	}
	return r, nil
}

// Find returns the token whose secret is presented, if any.
func (r *Ring) Find(secret string) (Token, bool) {
	got := sha256.Sum256([]byte(secret))
	match := -1
	for i := range r.sums {
		if subtle.ConstantTimeCompare(got[:], r.sums[i][:]) == 1 {
			match = i // no early return: every token is compared
		}
	}
	if match < 0 {
		return Token{}, false
	}
	return r.tokens[match], true
}

// Named returns the token of that name, so a session outlives neither
// its token's removal nor a change of role.
func (r *Ring) Named(name string) (Token, bool) {
	for _, t := range r.tokens {
		if t.Name == name {
			return t, true
		}
	}
	return Token{}, false
}

// Keys is the token set in force. It is the Ring the service's
// configuration carries when it carries one (Follow): a reload then puts
// new tokens in force in the same atomic step as the routes and people
// they go with (core's Reconfigure), and a lookup, which reads the set
// once, sees one configuration's tokens, never a mix, and never waits.
// Until then it is the Keys' own, which Replace swaps whole.
type Keys struct {
	own atomic.Pointer[Ring]
	// carried reads the tokens of the configuration in force (Follow);
	// nil: Keys has only its own.
	carried func() any
}

// NewKeys checks tokens (Validate) and returns them as a set.
func NewKeys(tokens []Token) (*Keys, error) {
	k := &Keys{}
	return k, k.Replace(tokens)
}

// Follow makes k read the tokens of the configuration in force,
// carried() (core's Service.Tokens), whenever that is a *Ring, ahead of
// its own. Call it before k is used.
func (k *Keys) Follow(carried func() any) { k.carried = carried }

// now is the set in force, read once for each lookup.
func (k *Keys) now() *Ring {
	if r := k.followed(); r != nil {
		return r
	}
	return k.own.Load()
}

// followed is the Ring the configuration in force carries, if any.
func (k *Keys) followed() *Ring {
	if k.carried == nil {
		return nil
	}
	r, _ := k.carried().(*Ring)
	return r
}

// Replace checks tokens and, if they hold, puts them in force in place of
// the set's; if not, the set stays as it was. Once the configuration in
// force carries tokens, they are replaced with it, not here: Replace
// refuses rather than change a set nobody reads.
func (k *Keys) Replace(tokens []Token) error {
	if k.followed() != nil {
		return errors.New("the tokens in force are the configuration's: they change with it (core's Reconfigure)")
	}
	r, err := NewRing(tokens)
	if err != nil {
		return err
	}
	k.own.Store(r)
	return nil
}

// Find returns the token whose secret is presented, if any.
func (k *Keys) Find(secret string) (Token, bool) { return k.now().Find(secret) }

// Named returns the token of that name as configured now, so a session
// outlives neither its token's removal nor a change of role.
func (k *Keys) Named(name string) (Token, bool) { return k.now().Named(name) }
