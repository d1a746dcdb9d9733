package app

import (
	"errors"
	"strings"
	"testing"
	"time"

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
	failed := m.deliveryFailed(t.Context(), svc, "delivery failed", "delivery waits")
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

// TestDeliveryWaitIsNoFailure: a delivery the platform held off (its rate
// limit, core.RetryAfter) or the courier was not ready for (core.NotReady)
// is logged at info as a wait, and a real failure still as a warning.
// Before, every hand-back of a rate limit was a "delivery failed"
// warning, though nothing was sent and the outbox sends it after the wait.
func TestDeliveryWaitIsNoFailure(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	var buf strings.Builder
	m := &Main{Log: zerolog.New(&buf)}
	failed := m.deliveryFailed(t.Context(), svc, "delivery failed", "delivery waits")
	d := core.Delivery{Key: "q1:post:slack:C1", Surface: core.SurfaceSlack, Room: "C1", Attempts: 1}
	failed(d, &core.RetryAfter{After: time.Second, Err: errors.New("429")})
	failed(d, &core.NotReady{After: time.Second, Err: errors.New("not connected yet")})
	failed(d, errors.New("channel_not_found"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 ||
		!strings.Contains(lines[0], `"level":"info"`) || !strings.Contains(lines[0], `"message":"delivery waits"`) ||
		!strings.Contains(lines[1], `"level":"info"`) || !strings.Contains(lines[1], `"message":"delivery waits"`) ||
		!strings.Contains(lines[2], `"level":"warn"`) || !strings.Contains(lines[2], `"message":"delivery failed"`) {
		t.Fatalf("logged:\n%s\nwant two waits at info, then one failure as a warning", buf.String())
	}
}
