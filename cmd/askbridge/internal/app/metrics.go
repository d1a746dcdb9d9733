package app

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
)

// newMetrics makes the program's metrics over the store as opened (for the
// outbox gauges) and returns the store to give core, which reports the
// leases it grants.
func (m *Main) newMetrics(st core.Store) core.Store {
	src := metrics.Source{Surfaces: core.OutboxSurfaces} // the webhook outbox's depth too
	for name := range m.Settings.coreConfig(nil).Routes {
		src.Routes = append(src.Routes, name)
	}
	if os, ok := st.(core.OutboxStats); ok {
		src.Outbox = os
	}
	if m.Clock != nil {
		src.Now = m.Clock.Now
	}
	m.Metrics = metrics.New(versionString(), src)
	return m.Metrics.WatchLeases(st)
}

// mountMetrics puts /metrics on the API's listener for observer, operator
// and admin tokens and, when
// ASKBRIDGE_METRICS_ADDR is set, opens a listener of its own that serves
// /metrics with no token (for a scraper on a private network).
func (m *Main) mountMetrics(mux *http.ServeMux, api *httpapi.Server, svc *core.Service) error {
	mx := m.Metrics
	mx.SetOpen(svc.ListOpen)
	svc.SetObserver(mx)
	mux.Handle("/metrics", observersOnly(api, mx.Handler()))

	addr := m.Settings.MetricsAddr
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("ASKBRIDGE_METRICS_ADDR: %w", err)
	}
	own := http.NewServeMux()
	own.Handle("/metrics", mx.Handler())
	m.MetricsURL = "http://" + ln.Addr().String()
	m.metricsServer = newServer(own)
	m.metricsLn = ln
	return nil
}

// serveMetrics returns what runs the metrics listener, if any, until
// Close.
func (m *Main) serveMetrics() func() error {
	srv, ln := m.metricsServer, m.metricsLn
	return func() error {
		if srv == nil {
			return nil
		}
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// closeMetrics stops the metrics listener (also when Run failed before
// serving it).
func (m *Main) closeMetrics() error {
	if m.metricsServer == nil {
		return nil
	}
	err := m.metricsServer.Close()
	m.metricsLn.Close() // not yet served: Close does not know it; served: already closed
	m.metricsServer, m.metricsLn = nil, nil
	return err
}

// observersOnly lets through tokens that may read everything: observer,
// operator and admin. An agent token sees only its own questions, so the
// store-wide numbers are not for it.
func observersOnly(api *httpapi.Server, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, wait, ok := api.Admit(r)
		if !ok {
			status, err := httpapi.AuthRefusal(w, wait) // 401, or 429 for a client out of guesses
			http.Error(w, core.ErrorMessage(err), status)
			return
		}
		switch tok.Role {
		case httpapi.RoleObserver, httpapi.RoleOperator, httpapi.RoleAdmin:
			h.ServeHTTP(w, r)
		default:
			http.Error(w, "metrics are for observer, operator and admin tokens", http.StatusForbidden)
		}
	})
}
