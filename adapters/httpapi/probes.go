package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/core"
)

// The probes, /healthz and /readyz, which take no token.

// probeMethod refuses a probe's method other than GET (and HEAD) in the
// API's error shape.
func probeMethod(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	writeErrorStatus(w, http.StatusMethodNotAllowed, core.CodeInvalid,
		fmt.Sprintf("%s is not allowed here; allowed: GET, HEAD", r.Method))
}

// healthz answers 200 while the process serves.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyzTimeout bounds the store ping, so a hung store reads as not ready
// rather than hanging the probe.
const readyzTimeout = 2 * time.Second

// readyz answers 200 when the store answers a ping, 503 otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyzTimeout)
	defer cancel()
	// A store client may not give up at the context's deadline (a stalled
	// Redis holds a read until the client's own read timeout), so the
	// probe waits for the ping or the bound, whichever comes first.
	pinged := make(chan error, 1)
	go func() { pinged <- s.svc.Ping(ctx) }()
	var err error
	select {
	case err = <-pinged:
	case <-ctx.Done():
		err = fmt.Errorf("no answer within %s", readyzTimeout)
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("readyz: the store is not ready")
		// The store's own word on what is happening (a failover under
		// way, a shard's primary not answering), which it words for an
		// unauthenticated probe; else the generic line.
		msg := "the store is not reachable"
		var ce *core.Error
		if errors.As(err, &ce) && ce.Message != "" {
			msg = "the store is not ready: " + ce.Message
		}
		if s.unavailable(err) {
			unavailable(w, msg)
			return
		}
		writeErrorStatus(w, http.StatusServiceUnavailable, core.CodeInternal, msg)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
