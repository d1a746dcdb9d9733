package redis_test

import (
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestDurableWaitLongerThanTheReadTimeout: a durability timeout above the
// client's read timeout (the settings take up to 10 s; go-redis reads in
// 3 s by default) is waited out, and the caller told the replicas did not
// confirm. Before, the read timeout cut the wait short, go-redis took it
// for a lost connection and sent the script and its wait again, up to
// MaxRetries times, and the caller got an i/o timeout after several
// times the read timeout (20 s for a 5 s durability timeout).
func TestDurableWaitLongerThanTheReadTimeout(t *testing.T) {
	ctx := t.Context()
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr(), ReadTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	s := newStoreOn(t, c, redisstore.Options{Durability: redisstore.Durability{Replicas: 1, Timeout: 300 * time.Millisecond}})
	for i, run := range []core.RunID{"run-0", "run-1"} { // the first loads the scripts
		q := question(0, run, t0)
		err := s.Create(ctx, q, event(q, core.EventAsked, q.CreatedAt), nil)
		if !core.Unavailable(err) || i > 0 && !strings.Contains(err.Error(), "saw 0 of 1 replicas") {
			t.Fatalf("ask %d with no replica and a wait longer than the read timeout: %v; want the wait's own maybe-recorded error", i, err)
		}
	}
	// Standing approvals change in a WATCH transaction with its wait.
	grant := core.Standing{ID: "st-1", Scope: core.StandingAgent, Agent: "agent-a", Tool: "Bash", Route: core.DefaultRoute,
		QuestionID: "q-1", GrantedAt: t0, Until: t0.Add(time.Hour)}
	err := s.PutStanding(ctx, grant)
	if !core.Unavailable(err) || !strings.Contains(err.Error(), "saw 0 of 1 replicas") {
		t.Fatalf("grant with no replica and a wait longer than the read timeout: %v; want the wait's own maybe-recorded error", err)
	}
}
