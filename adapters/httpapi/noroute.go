package httpapi

import (
	"fmt"
	"net/http"
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
