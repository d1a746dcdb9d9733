package webhook_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
)

// BenchmarkCall sends one signed webhook of a wait-sized body (about 2 KB)
// to a local receiver (signed-µs/op), each followed, as a yardstick, by a
// plain POST of the same body over a client of its own (plain-µs/op): the
// difference is what the headers and the signature cost. ns/op and the
// allocations count both.
func BenchmarkCall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	body := bytes.Repeat([]byte("x"), 2048)
	s, err := webhook.New(webhook.Options{Allow: core.CallbackPrefixes{srv.URL}, Keys: &webhook.Keys{Default: []byte(secret)},
		Body: func(*core.Question) ([]byte, error) { return body, nil }})
	if err != nil {
		b.Fatal(err)
	}
	q := &core.Question{ID: "q1", Agent: "agent-a", Route: "default"}
	d := core.Delivery{Key: core.WebhookKey("q1"), Kind: core.DeliverWebhook, Surface: core.SurfaceWebhook, Room: srv.URL + "/hooks", QuestionID: "q1"}
	ctx := b.Context()
	hc := &http.Client{}
	plain := func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, d.Room, bytes.NewReader(body))
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The two alternate, so a busy moment of the machine falls on both.
	var signed, yard time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if err := s.Call(ctx, q, d); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		plain()
		signed, yard = signed+t1.Sub(t0), yard+time.Since(t1)
	}
	b.ReportMetric(float64(signed.Microseconds())/float64(b.N), "signed-µs/op")
	b.ReportMetric(float64(yard.Microseconds())/float64(b.N), "plain-µs/op")
}
