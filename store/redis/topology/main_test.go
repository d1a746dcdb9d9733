// Package topology_test runs the Redis store on the topologies teams run
// in production, each of real redis-server processes started here: a
// Redis Cluster of three primaries with a replica each, and a primary
// with a replica watched by three Sentinels. It holds the conformance
// suite, the race of several replicas and the failovers; the store's own
// package tests it on one server.
package topology_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// harness opens stores for the conformance suite, each on a client of its
// own dialled from dial.
type harness struct {
	dial       redisstore.Dial
	shards     int
	durability redisstore.Durability

	mu   sync.Mutex
	opts map[core.Store]redisstore.Options
}

func (h *harness) open(t *testing.T, o redisstore.Options) core.Store {
	t.Helper()
	s, err := redisstore.Connect(t.Context(), h.dial, o)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	h.mu.Lock()
	if h.opts == nil {
		h.opts = map[core.Store]redisstore.Options{}
	}
	h.opts[s] = o
	h.mu.Unlock()
	return s
}

func (h *harness) options(t *testing.T, s core.Store) redisstore.Options {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	o, ok := h.opts[s]
	if !ok {
		t.Fatal("a store the harness did not open")
	}
	return o
}

func (h *harness) Open(t *testing.T) core.Store {
	return h.open(t, redisstore.Options{Prefix: randomPrefix(), Shards: h.shards, Durability: h.durability, AuditKey: []byte(storetest.AuditKey)})
}

func (h *harness) Clocked(t *testing.T, now func() time.Time) core.Store {
	return h.open(t, redisstore.Options{Prefix: randomPrefix(), Shards: h.shards, Durability: h.durability, Now: now, AuditKey: []byte(storetest.AuditKey)})
}

func (h *harness) Replica(t *testing.T, s core.Store) core.Store {
	return h.open(t, h.options(t, s))
}

func (h *harness) Reopen(t *testing.T, s core.Store) core.Store {
	o := h.options(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return h.open(t, o)
}

func randomPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}

// go-redis logs each dial that fails and each Sentinel it picks; the
// failovers here make many of both on purpose.
func init() { goredis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
