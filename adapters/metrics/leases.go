package metrics

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/prometheus/client_golang/prometheus"
)

// WatchLeases returns st with the single-connection leases it grants
// reported in leases_held. Those are named by their platform, the key's
// first segment ("telegram:<bot>:poller" is telegram, "discord:<app>:gateway"
// discord), so a bot's id never becomes a label; other leases (core's
// per-delivery posting marks) are not counted.
func (m *Metrics) WatchLeases(st core.Store) core.Store {
	return &leaseStore{Store: st, leases: m.leases}
}

type leaseStore struct {
	core.Store
	leases *leaseCollector
}

// leaseName is the platform a lease key belongs to, or "" for a key that
// is not a single connection's lease.
func leaseName(key string) string {
	name, _, _ := strings.Cut(key, ":")
	if s, err := core.ParseSurface(name); err != nil || !s.IsChat() {
		return ""
	}
	return name
}

// Lease reports a lease the store granted as held until its ttl has run
// from when the call was sent (the store's ttl runs from when it ran the
// call, no earlier), which is as long as a loops.Leader goes on under it
// without another renewal confirmed. A renewal that fails changes
// nothing: the lease runs out on the gauge when it runs out for the Leader,
// rather than reading held for as long as the store is out of reach
// while another replica, which can reach it, holds it too.
func (l *leaseStore) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	name := leaseName(key)
	if name == "" {
		return l.Store.Lease(ctx, key, owner, ttl)
	}
	seq, sent := l.leases.sending()
	ok, err := l.Store.Lease(ctx, key, owner, ttl)
	if err == nil {
		l.leases.answered(name, seq, ok, sent.Add(ttl))
	}
	return ok, err
}

// Release reports the lease given up whether or not the store heard of
// it: the replica has stopped acting under it (a Leader releases as it
// stops), and the store's copy runs out by itself.
func (l *leaseStore) Release(ctx context.Context, key, owner string) error {
	if name := leaseName(key); name != "" {
		l.leases.released(name)
	}
	return l.Store.Release(ctx, key, owner)
}

// leaseCollector is leases_held, read at scrape time: a lease is held
// while the ttl of the last renewal the store confirmed has not run out.
type leaseCollector struct {
	now func() time.Time

	mu  sync.Mutex
	seq uint64 // counts calls sent and releases, to order them
	// by lease name; telegram and discord are there from the start, so
	// an alert sees them at 0 before either is first tried.
	state map[string]leaseState
}

type leaseState struct {
	until    time.Time // held before this; zero: not held
	released uint64    // seq of the last release: an answer to a call sent before it is stale
}

var leasesDesc = prometheus.NewDesc(namespace+"_leases_held",
	"1 while this replica holds the named single-connection lease (telegram: polling; discord: the gateway), 0 otherwise.", []string{"lease"}, nil)

func newLeaseCollector(now func() time.Time) *leaseCollector {
	if now == nil {
		now = time.Now
	}
	return &leaseCollector{now: now, state: map[string]leaseState{"telegram": {}, "discord": {}}}
}

// sending numbers a call about to be sent and says when it was.
func (c *leaseCollector) sending() (uint64, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	return c.seq, c.now()
}

// answered records the store's answer to call seq: granted until until,
// or refused. A renewal that was still out when the lease was released
// (a Leader does not wait for it) must not bring the lease back.
func (c *leaseCollector) answered(name string, seq uint64, granted bool, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state[name]
	if seq < st.released {
		return
	}
	st.until = time.Time{}
	if granted {
		st.until = until
	}
	c.state[name] = st
}

func (c *leaseCollector) released(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.state[name] = leaseState{released: c.seq}
}

func (c *leaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- leasesDesc }

func (c *leaseCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for name, st := range c.state {
		v := 0.0
		if now.Before(st.until) {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(leasesDesc, prometheus.GaugeValue, v, name)
	}
}
