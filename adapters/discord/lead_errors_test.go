package discord

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/changes"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/logbuf"
)

// outageLeases is the store's leases failing while down, as an
// unreachable Redis's do.
type outageLeases struct {
	loops.Leases
	mu      sync.Mutex
	down    bool
	failed  int
	changes changes.Signal
}

func (o *outageLeases) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	defer o.changes.Notify()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down {
		o.failed++
		return false, errors.New("dial tcp 10.0.0.7:6379: connect: connection refused")
	}
	return o.Leases.Lease(ctx, key, owner, ttl)
}

// TestGatewayLogsALeaseStoreOutage: when the gateway lease's store
// fails, the log says so once, naming Discord, the lease key and the
// store's error, and says once that it answers again.
func TestGatewayLogsALeaseStoreOutage(t *testing.T) {
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	svc, _ := coretest.Open(t, coretest.Options{})
	leases := &outageLeases{Leases: svc.Values(), down: true}
	logs := &logbuf.Buffer{}
	a, err := New(svc, Options{Token: fake.Token, APIURL: fake.APIURL(), Gateway: true,
		Leases: leases, Owner: "replica-1", LeaseTTL: 200 * time.Millisecond, Log: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if !leases.changes.Wait(5*time.Second, 0, func() bool { leases.mu.Lock(); defer leases.mu.Unlock(); return leases.failed >= 3 }) {
		t.Fatal("fewer than 3 lease calls")
	}
	const failing, back = "discord: the gateway lease's store is failing", "discord: the gateway lease's store answers again"
	key := `"lease":"` + a.gatewayKey() + `"`
	if got := logs.Lines(failing); len(got) != 1 || !strings.Contains(got[0], key) || !strings.Contains(got[0], "connection refused") {
		t.Fatalf("after 3 failed lease calls the log has %q, want one line with the lease and the error", got)
	}
	leases.mu.Lock()
	leases.down = false
	leases.mu.Unlock()
	if !fake.WaitFor(10*time.Second, func() bool { return fake.Connected() == 1 }) {
		t.Fatal("never connected once the store answered")
	}
	if got := logs.Lines(back); len(got) != 1 || !strings.Contains(got[0], key) {
		t.Fatalf("the recovery logged as %q, want once, with the lease", got)
	}
}
