package httpapi

import (
	"context"
	"fmt"
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
// program hands the same set to the console.
type Keys = access.Keys

// Ring is one checked token set (access.Ring), as core's configuration
// carries it (core.Config.Tokens): a reload that carries the file's
// tokens in it swaps them with the routes, in one step.
type Ring = access.Ring

// NewRing checks tokens and returns them as a Ring, for core.Config.Tokens.
func NewRing(tokens []Token) (*Ring, error) {
	r, err := access.NewRing(tokens)
	if err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	return r, nil
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

type rolesKey struct{}

// withRoles notes the roles that may use the route r is on (routes), for
// a response that checks its token again as it goes (stillHolds).
func withRoles(ctx context.Context, roles []Role) context.Context {
	return context.WithValue(ctx, rolesKey{}, roles)
}

// mayUse reports whether a token with role may use a route open to roles
// (admin may use them all).
func mayUse(role Role, roles []Role) bool {
	for _, want := range roles {
		if role.Includes(want) {
			return true
		}
	}
	return false
}

// stillHolds returns the check a long response (an events stream) makes
// as it goes, since the token was checked once, when it began: the secret
// r presented still names the token of the same name, in the set in force
// now, with a role that may still use the route. A reload that removes
// the token, gives it a new secret or a role that may not use the route
// ends the response (README: a removed token stops working).
func (s *Server) stillHolds(r *http.Request) func(context.Context) bool {
	roles, _ := r.Context().Value(rolesKey{}).([]Role)
	return s.StillHolds(r, caller(r), roles...)
}

// StillHolds is the same check for a door outside the API's routes (the
// MCP door) that admitted r as tok (Admit), open to roles: the secret r
// presented still names tok's name in the tokens in force now, with a
// role among roles.
func (s *Server) StillHolds(r *http.Request, tok Token, roles ...Role) func(context.Context) bool {
	secret, _ := bearer(r)
	return func(context.Context) bool {
		now, ok := s.keys.Find(secret)
		return ok && now.Name == tok.Name && mayUse(now.Role, roles)
	}
}
