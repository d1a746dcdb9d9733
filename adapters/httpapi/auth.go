package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/rs/zerolog"
)

// Role is what a token may do.
type Role string

const (
	// RoleAgent asks questions, and reads, waits on and cancels its own;
	// it ends its own runs. The token's name is the asking agent.
	RoleAgent Role = "agent"
	// RoleOperator lists, reads, answers and declines any question, and
	// reads events and digests.
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

// includes reports whether a token with role r may act as want.
func (r Role) includes(want Role) bool { return r == RoleAdmin || r == want }

// Token is one bearer token. Name identifies it in logs and answers (an
// agent token's name is the asking agent); Secret is what the caller
// presents and is never logged or printed.
type Token struct {
	Name   string
	Secret string
	Role   Role
}

// String names the token without its secret, so a token passed to a
// formatter or logger by mistake does not leak it.
func (t Token) String() string { return t.Name + " (" + string(t.Role) + ")" }

// GoString keeps %#v from printing the secret too.
func (t Token) GoString() string {
	return fmt.Sprintf("httpapi.Token{Name:%q, Secret:REDACTED, Role:%q}", t.Name, t.Role)
}

// MarshalZerologObject logs the token's name and role, never its secret.
func (t Token) MarshalZerologObject(e *zerolog.Event) {
	e.Str("name", t.Name).Str("role", string(t.Role))
}

// minSecretLen keeps guessable secrets out of configuration.
const minSecretLen = 16

// validateTokens checks what New is given: every token named, with a
// real secret and a known role, and no name or secret used twice.
func validateTokens(tokens []Token) error {
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

// keyring finds the token a request presents. Secrets are kept as SHA-256
// sums and compared in constant time against every token, so neither
// the length of a secret nor which token matched shows in the timing.
type keyring struct {
	tokens []Token
	sums   [][sha256.Size]byte
}

func newKeyring(tokens []Token) *keyring {
	k := &keyring{tokens: append([]Token(nil), tokens...)}
	for _, t := range tokens {
		k.sums = append(k.sums, sha256.Sum256([]byte(t.Secret)))
	}
	return k
}

// find returns the token whose secret is presented, if any.
func (k *keyring) find(secret string) (Token, bool) {
	got := sha256.Sum256([]byte(secret))
	match := -1
	for i := range k.sums {
		if subtle.ConstantTimeCompare(got[:], k.sums[i][:]) == 1 {
			match = i // no early return: every token is compared
		}
	}
	if match < 0 {
		return Token{}, false
	}
	return k.tokens[match], true
}

// bearer returns the credentials of an "Authorization: Bearer ..." header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	s := strings.TrimSpace(h[len(prefix):])
	return s, s != ""
}

type tokenKey struct{}

// caller is the token that authenticated r; handlers under /v1 always
// have one.
func caller(r *http.Request) Token {
	t, _ := r.Context().Value(tokenKey{}).(Token)
	return t
}

func withCaller(ctx context.Context, t Token) context.Context {
	return context.WithValue(ctx, tokenKey{}, t)
}
