package discord

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// countingLeases is the store's leases, counting each owner's refusals,
// so the test knows a replica asked while another held the gateway.
type countingLeases struct {
	loops.Leases
	mu      sync.Mutex
	refused map[string]int
}

func (c *countingLeases) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	ok, err := c.Leases.Lease(ctx, key, owner, ttl)
	if err == nil && !ok {
		c.mu.Lock()
		c.refused[owner]++
		c.mu.Unlock()
	}
	return ok, err
}

func (c *countingLeases) refusals(owner string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused[owner]
}

// TestOnlyTheLeaseHolderOpensTheGateway: two replicas with the gateway on
// share one lease; one connects, the other waits, and takes the gateway
// over as soon as the first stops.
func TestOnlyTheLeaseHolderOpensTheGateway(t *testing.T) {
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	svc, _ := coretest.Open(t, coretest.Options{})
	leases := &countingLeases{Leases: svc.Values(), refused: map[string]int{}}
	start := func(owner string) (stop func()) {
		a, err := New(svc, Options{Token: fake.Token, APIURL: fake.APIURL(), Gateway: true,
			Leases: leases, Owner: owner, LeaseTTL: 400 * time.Millisecond, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = a.Run(ctx); close(done) }()
		stop = func() { cancel(); <-done }
		t.Cleanup(stop)
		return stop
	}
	stop1 := start("replica-1")
	if !fake.WaitFor(10*time.Second, func() bool { return fake.Connected() == 1 }) {
		t.Fatal("the first replica never connected")
	}
	start("replica-2")
	if !fake.WaitFor(10*time.Second, func() bool { return leases.refusals("replica-2") >= 3 }) {
		t.Fatal("the second replica never asked for the gateway lease")
	}
	if n := len(fake.Identified()); n != 1 || fake.Connected() != 1 {
		t.Fatalf("%d identifies, %d connections while one replica held the lease", n, fake.Connected())
	}
	stop1() // releases the lease
	if !fake.WaitFor(10*time.Second, func() bool { return len(fake.Identified()) == 2 && fake.Connected() == 1 }) {
		t.Fatalf("the second replica did not take the gateway over: %d identifies, %d connections",
			len(fake.Identified()), fake.Connected())
	}
}
