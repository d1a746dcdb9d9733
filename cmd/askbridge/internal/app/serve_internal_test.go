package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestFailedDeliveryLogNamesNoRecipient: the log line of a failed
// delivery names an ntfy topic, an email address and a direct message's
// recipient as the event log does, by pseudonym; before, it printed the
// delivery's key and the platform's error as they were, topic, address
// and name included.
func TestFailedDeliveryLogNamesNoRecipient(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	var buf strings.Builder
	m := &Main{Log: zerolog.New(&buf)}
	failed := m.deliveryFailed(t.Context(), svc, "delivery failed")
	const topic, addr = "s3cret-topic-of-alice", "alice@example.com"
	failed(core.Delivery{Key: "q1:post:ntfy:" + topic, Surface: core.SurfaceNtfy, Room: topic, Attempts: 2}, errors.New(`Post "https://ntfy.example/`+topic+`": 502`))
	failed(core.Delivery{Key: "q1:post:email:" + addr, Surface: core.SurfaceEmail, Room: addr, Attempts: 1}, errors.New("450 4.2.1 <"+addr+">: try later"))
	failed(core.Delivery{Key: "q1:post:dm:alice", Surface: core.SurfaceTelegram, Room: core.DMRoom("2002"), Attempts: 1}, errors.New("429"))
	got := buf.String()
	if strings.Contains(got, topic) || strings.Contains(got, addr) || strings.Contains(got, "dm:alice") ||
		strings.Count(got, `"message":"delivery failed"`) != 3 || !strings.Contains(got, "try later") || !strings.Contains(got, `"surface":"ntfy"`) {
		t.Fatalf("logged:\n%s\nwant three lines naming no topic, address or person, the errors' words kept", got)
	}
}
