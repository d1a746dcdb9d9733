package app

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func TestGoRedisLogsThroughTheProgramsLog(t *testing.T) {
	var buf strings.Builder
	l := redisLog{zerolog.New(&buf).Level(zerolog.DebugLevel)}
	l.Printf(t.Context(), "sentinel: selected addr=%s", "127.0.0.1:6379")
	if got := buf.String(); !strings.Contains(got, `"level":"debug"`) || !strings.Contains(got, `"component":"go-redis"`) ||
		!strings.Contains(got, `"message":"sentinel: selected addr=127.0.0.1:6379"`) {
		t.Fatalf("logged %s", got)
	}
}

// TestMCPOverTheAPIWaitsOutAFailover: the server's 503 for a store that is
// failing over reaches the MCP tools as "unavailable", which a wait rides
// out, not as a coded error that would end it.
func TestMCPOverTheAPIWaitsOutAFailover(t *testing.T) {
	b := clientBackend{url: "http://askbridge.example", tokenFrom: "ASKBRIDGE_TOKEN"}
	err := b.coded(&client.Error{Status: http.StatusServiceUnavailable, Code: string(core.CodeUnavailable),
		Message: core.UnavailableMessage, RetryAfter: time.Second})
	var u *mcp.UnavailableError
	if !errors.As(err, &u) || !strings.Contains(u.Message, "failing over") {
		t.Fatalf("coded 503 unavailable = %#v, want an mcp.UnavailableError", err)
	}
	// Another 503 (a proxy's, say) is not mistaken for it.
	if err := b.coded(&client.Error{Status: http.StatusServiceUnavailable, Message: "no upstream"}); errors.As(err, &u) && strings.Contains(u.Message, "failing over") {
		t.Fatalf("a proxy's 503 read as a failover: %v", err)
	}
}

// TestFailedDeliveryLogNamesNoRecipient: the log line of a failed
// delivery names an ntfy topic, an email address and a direct message's
// recipient as the event log does, by pseudonym; before, it printed the
// delivery's key and the platform's error as they were, topic, address
// and name included.
func TestFailedDeliveryLogNamesNoRecipient(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	var buf strings.Builder
	m := &Main{Log: zerolog.New(&buf)}
	failed := m.deliveryFailed(t.Context(), svc)
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
