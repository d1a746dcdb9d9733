package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// What a request that no route serves is answered: the API's error
// shape, with the 404 or 405 (and Allow) that http.ServeMux chose.

// noRoute answers a request no route of muxes matches in the API's JSON
// shape, keeping the muxes' choice between 404 and 405 (and its Allow
// header): 405 if any of them has the path for another method.
func noRoute(w http.ResponseWriter, r *http.Request, muxes ...*http.ServeMux) {
	for _, mux := range muxes {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			// A route of its own, which another mux's pattern beat (one
			// naming a host): never run for a probe.
			continue
		}
		// The mux's own 404 or 405 handler: no side effects.
		probe := &probe{header: http.Header{}, status: http.StatusOK}
		h.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			writeErrorStatus(w, http.StatusMethodNotAllowed, core.CodeInvalid,
				fmt.Sprintf("%s is not allowed here; allowed: %s", r.Method, probe.header.Get("Allow")))
			return
		}
	}
	writeErrorStatus(w, http.StatusNotFound, core.CodeNotFound, client.NoRouteMessage)
}

// inAPI reports whether u's path is the API's to answer: under /v1 as
// written, or once cleaned as http.ServeMux cleans it ("//v1/questions").
func inAPI(u *url.URL) bool {
	return underV1(u.Path) || underV1(cleaned(u.EscapedPath()))
}

func underV1(p string) bool { return p == "/v1" || strings.HasPrefix(p, "/v1/") }

// cleaned is p as http.ServeMux routes it: rooted, with no empty, "." or
// ".." segment, and its trailing slash kept. A path that differs from it
// the mux answers with a redirect to it.
func cleaned(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// unclean reports whether http.ServeMux would redirect r's path rather
// than route it.
func unclean(r *http.Request) bool { return cleaned(r.URL.EscapedPath()) != r.URL.EscapedPath() }

// uncleanMessage is the 404's for an unclean path under /v1: that path
// is not a route, and the API says so rather than redirect. A client
// following the mux's redirect sends its token and body on to a route
// it never named, and one that does not follow reads no error it can
// parse.
const uncleanMessage = client.NoRouteMessage + `: a path under /v1 is served only as written, without an empty, "." or ".." segment`

// Front puts the API's answer to an unclean path under /v1 (ServeHTTP's
// 401, or 404 in the API's shape) in front of next, the program's own
// http.ServeMux, which would otherwise redirect the request before the
// API saw it. Every other request is next's.
func (s *Server) Front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inAPI(r.URL) && unclean(r) {
			s.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// patternPath is the path part of a ServeMux pattern ("GET /v1/x" ->
// "/v1/x"), "" for none.
func patternPath(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[i:]
	}
	return ""
}

// probe captures what the mux's fallback handler would have written.
type probe struct {
	header http.Header
	status int
}

func (p *probe) Header() http.Header         { return p.header }
func (p *probe) Write(b []byte) (int, error) { return len(b), nil }
func (p *probe) WriteHeader(status int)      { p.status = status }
