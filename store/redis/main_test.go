package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// server is the one private redis-server of this test binary; every test
// uses its own key prefix on it.
var server *redistest.Server

// slotViolations collects script calls whose keys span slots.
var slotViolations sync.Map

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "askbridge-redis-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	server, err = redistest.StartServer(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "store/redis tests:", err)
		return 1
	}
	defer server.Close()

	redisstore.SetScriptHook(func(name string, keys []string) {
		for _, k := range keys[1:] {
			if redisstore.Slot(k) != redisstore.Slot(keys[0]) {
				slotViolations.Store(name+": "+strings.Join(keys, " "), true)
			}
		}
	})
	code := m.Run()
	var bad []string
	slotViolations.Range(func(k, _ any) bool { bad = append(bad, k.(string)); return true })
	if len(bad) > 0 {
		sort.Strings(bad)
		fmt.Fprintf(os.Stderr, "scripts called with keys in several slots:\n%s\n", strings.Join(bad, "\n"))
		return 1
	}
	return code
}

func randomPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}

// newClient is a client of the test server, closed when the test ends.
func newClient(t testing.TB) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newStore opens a store on the test server with a fresh prefix (unless
// opts names one), closed when the test ends.
func newStore(t testing.TB, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	return newStoreOn(t, newClient(t), opts)
}

func newStoreOn(t testing.TB, c goredis.UniversalClient, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = randomPrefix()
	}
	s, err := redisstore.New(context.Background(), c, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// harnessStores remembers how each store of the conformance harness was
// made, so Reopen can make it again.
type harnessStore struct {
	client goredis.UniversalClient
	opts   redisstore.Options
}

type harness struct {
	mu     sync.Mutex
	stores map[core.Store]harnessStore
	client func(t *testing.T) goredis.UniversalClient
	shards int
}

func (h *harness) open(t *testing.T, c goredis.UniversalClient, opts redisstore.Options) core.Store {
	t.Helper()
	s := newStoreOn(t, c, opts)
	h.mu.Lock()
	if h.stores == nil {
		h.stores = map[core.Store]harnessStore{}
	}
	h.stores[s] = harnessStore{client: c, opts: opts}
	h.mu.Unlock()
	return s
}

func (h *harness) Open(t *testing.T) core.Store {
	return h.open(t, h.client(t), redisstore.Options{Prefix: randomPrefix(), Shards: h.shards, AuditKey: audit.Key(storetest.AuditKey)})
}

// Clocked is Open on a simulated clock for the outbox's due times.
func (h *harness) Clocked(t *testing.T, now func() time.Time) core.Store {
	return h.open(t, h.client(t), redisstore.Options{Prefix: randomPrefix(), Shards: h.shards, Now: now, AuditKey: audit.Key(storetest.AuditKey)})
}

// Replica is another store on s's data, on a client of its own.
func (h *harness) Replica(t *testing.T, s core.Store) core.Store {
	h.mu.Lock()
	hs, ok := h.stores[s]
	h.mu.Unlock()
	if !ok {
		t.Fatalf("Replica of a store the harness did not open")
	}
	return newStoreOn(t, h.client(t), hs.opts)
}

func (h *harness) Reopen(t *testing.T, s core.Store) core.Store {
	h.mu.Lock()
	hs, ok := h.stores[s]
	delete(h.stores, s)
	h.mu.Unlock()
	if !ok {
		t.Fatalf("Reopen of a store the harness did not open")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return h.open(t, hs.client, hs.opts)
}
