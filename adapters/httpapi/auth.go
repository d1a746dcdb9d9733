package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/access"
)

// Role is what a token may do (adapters/internal/access, shared with the
// console).
type Role = access.Role

// The roles.
const (
	RoleAgent    = access.RoleAgent
	RoleOperator = access.RoleOperator
	RoleObserver = access.RoleObserver
	RoleAdmin    = access.RoleAdmin
)

// ParseRole accepts exactly the four role names.
func ParseRole(s string) (Role, error) { return access.ParseRole(s) }

// Token is one bearer token (access.Token): its secret is never logged
// or printed.
type Token = access.Token

// Keys is the token set the API authenticates with (access.Keys): the
// program hands the same set to the console, and replaces it on reload.
type Keys = access.Keys

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
