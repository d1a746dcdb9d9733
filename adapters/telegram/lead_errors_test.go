package telegram

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/internal/changes"
	"github.com/askbridge/askbridge/internal/logbuf"
)

// outageKV is the poller's store with its leases failing while down, as
// an unreachable Redis's do.
type outageKV struct {
	PollState
	mu      sync.Mutex
	down    bool
	calls   int // lease calls, failed or not
	changes changes.Signal
}

func (o *outageKV) set(down bool) { o.mu.Lock(); o.down = down; o.mu.Unlock() }

func (o *outageKV) Lease(ctx context.Context, k, owner string, ttl time.Duration) (bool, error) {
	defer o.changes.Notify()
	o.mu.Lock()
	o.calls++
	down := o.down
	o.mu.Unlock()
	if down {
		return false, errors.New("dial tcp 10.0.0.7:6379: connect: connection refused")
	}
	return o.PollState.Lease(ctx, k, owner, ttl)
}

// waitCalls waits up to five seconds for n lease calls in all.
func (o *outageKV) waitCalls(t *testing.T, n int) {
	t.Helper()
	if !o.changes.Wait(5*time.Second, 0, func() bool { o.mu.Lock(); defer o.mu.Unlock(); return o.calls >= n }) {
		t.Fatalf("fewer than %d lease calls", n)
	}
}

func (o *outageKV) count() int { o.mu.Lock(); defer o.mu.Unlock(); return o.calls }

// TestPollerLogsALeaseStoreOutage: when the polling lease's store fails,
// the log says so once, naming Telegram, the lease key and the store's
// error, and says once that it answers again. Before, no replica polled
// and nothing was logged.
func TestPollerLogsALeaseStoreOutage(t *testing.T) {
	kv := &outageKV{PollState: newMemKV(), down: true}
	e := newEnv(t, kv)
	e.a.opts.LeaseTTL = 200 * time.Millisecond
	logs := &logbuf.Buffer{}
	e.a.log = zerolog.New(logs)
	e.startRun()
	kv.waitCalls(t, 3)
	const failing, back = "telegram: the polling lease's store is failing", "telegram: the polling lease's store answers again"
	got := logs.Lines(failing)
	if len(got) != 1 {
		t.Fatalf("%d lines say the lease store fails after 3 failed calls, want 1; log:\n%s", len(got), logs)
	}
	for _, want := range []string{`"level":"error"`, `"lease":"` + e.a.leaseKey() + `"`, "connection refused"} {
		if !strings.Contains(got[0], want) {
			t.Fatalf("the failure's line lacks %s: %s", want, got[0])
		}
	}
	kv.set(false)
	if !e.fake.Wait(5*time.Second, func() bool { return countCalls(e.fake, "getUpdates") > 0 }) {
		t.Fatal("never polled once the store answered")
	}
	kv.waitCalls(t, kv.count()+3) // renewals
	if got := logs.Lines(back); len(got) != 1 || !strings.Contains(got[0], `"lease":"`+e.a.leaseKey()+`"`) {
		t.Fatalf("the recovery logged as %q, want once, with the lease", got)
	}
	if n := len(logs.Lines(failing)); n != 1 {
		t.Fatalf("%d lines say the lease store fails, want 1", n)
	}
}
