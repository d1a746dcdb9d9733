// Package tracehttp carries W3C trace context (the traceparent and
// tracestate headers) on outgoing HTTP requests, from the span in each
// request's context. askbridge's own clients use it, so an agent's trace
// goes on into the server, and so can any courier that calls out over
// HTTP (a webhook): core starts each delivery's span in the context the
// courier sends with, and a request made with that context carries the
// span onward to its receiver.
package tracehttp

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Inject sets r's traceparent and tracestate headers from the span in
// r's context; it leaves r alone when that context has no span.
func Inject(r *http.Request) {
	if trace.SpanContextFromContext(r.Context()).IsValid() {
		propagation.TraceContext{}.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	}
}

// Transport returns base (http.DefaultTransport if nil) sending each
// request with the trace context of the request's context, for an
// *http.Client that calls out under core's spans:
//
//	hc := &http.Client{Transport: tracehttp.Transport(nil)}
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if trace.SpanContextFromContext(r.Context()).IsValid() {
		r = r.Clone(r.Context()) // a RoundTripper must not change the caller's request
		Inject(r)
	}
	return t.base.RoundTrip(r)
}
