package mcp

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The streamable HTTP transport has a server validate the Origin header
// of every request and answer an invalid one with 403, so that a page in
// a browser cannot drive the endpoint (DNS rebinding, or a page posting
// to a local server). The SDK checks only the Host of a request that
// reached a loopback address. A client that is not a browser sends no
// Origin and is let through; a browser sends one, and only the
// endpoint's own origin is valid: askbridge answers no CORS preflight,
// so a page of another origin could never have used the endpoint anyway,
// and refusing it outright keeps such a page from parking questions with
// requests a browser sends without asking first.

// crossOrigin reports a request whose Origin names another origin than
// the one it was sent to (its Host), or no origin at all ("null", a
// sandboxed or local page).
func crossOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return true
	}
	return !strings.EqualFold(u.Host, r.Host)
}

// sameOrigin refuses cross-origin requests (crossOrigin) with 403 and a
// JSON-RPC error without an id, as the transport allows, before next
// serves anything of them.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !crossOrigin(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "error": &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidRequest,
			Message: "Forbidden: the Origin header names another origin than this endpoint's; a browser page may not call it",
		}})
	})
}
