package webhook_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/askbridge/askbridge/core"
)

// TestWebhookCarriesTheTrace: a webhook is sent with the trace context of
// the span it is sent under (core's delivery span), so the receiver's
// trace goes on from the agent's ask, as the README says. Before, the
// sender's client carried none.
func TestWebhookCarriesTheTrace(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
	}))
	defer srv.Close()
	s := plainSender(t, srv.URL+"/")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID: trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(t.Context(), sc)
	err := s.Call(ctx, &core.Question{ID: "q1", Agent: "agent-a", Route: "default"},
		core.Delivery{Key: core.WebhookKey("q1"), Kind: core.DeliverWebhook, Surface: core.SurfaceWebhook, Room: srv.URL + "/hook", QuestionID: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	if tp := <-got; !strings.Contains(tp, sc.TraceID().String()) || !strings.Contains(tp, sc.SpanID().String()) {
		t.Fatalf("the webhook's traceparent: %q; want the span's %s", tp, sc.TraceID())
	}
}
