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
