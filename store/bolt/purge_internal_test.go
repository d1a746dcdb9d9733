package bolt

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// bucketLen counts the keys of bucket (0 if it does not exist).
func bucketLen(t *testing.T, s *Store, bucket []byte) int {
	t.Helper()
	n := 0
	if err := s.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucket); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// purgeAsCore purges the way core.Service.Purge does: again while a
// purge returns its limit of closed questions.
func purgeAsCore(t *testing.T, s *Store, cutoff time.Time) {
	t.Helper()
	for {
		n, err := s.Purge(t.Context(), cutoff, 500)
		if err != nil {
			t.Fatal(err)
		}
		if n < 500 {
			return
		}
	}
}

// TestPurgeDropsEveryExpiredKey: ordinary chat traffic (a Once per
// platform event, a TTL value per sign-in, a lease per card posted and
// reminder sent) leaves thousands of keys to
// expire between purges, and refusals of unknown ids leave loose events.
// One purge, as core runs it, drops every one of them that is due,
// however few closed questions there are, and keeps the live ones.
func TestPurgeDropsEveryExpiredKey(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{Now: clock, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	const expiring, live, loose = 2000, 1500, 1200
	// Live keys (3 in 7) are interleaved with the expiring ones, so a
	// purge must look past them.
	isLive := func(i int) bool { return i%7 < 3 }
	for i := range expiring + live {
		ttl := time.Hour
		if isLive(i) {
			ttl = 48 * time.Hour
		}
		if first, err := s.Once(ctx, fmt.Sprintf("slack:event:%05d", i), ttl); err != nil || !first {
			t.Fatalf("once %d: %v, %v", i, first, err)
		}
		if err := s.SetValueFor(ctx, fmt.Sprintf("console:session:%05d", i), "v", ttl); err != nil {
			t.Fatal(err)
		}
		// A card's posting mark, a reminder's claim: leases, each taken once.
		if held, err := s.Lease(ctx, fmt.Sprintf("posting:q%05d:post", i), "owner", ttl); err != nil || !held {
			t.Fatalf("lease %d: %v, %v", i, held, err)
		}
	}
	for i := range loose {
		if _, err := s.Append(ctx, core.Event{At: now, Kind: core.EventRefused, Reason: fmt.Sprint("unknown id ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := bucketLen(t, s, bucketOnce); got != expiring+live {
		t.Fatalf("once keys before the purge: %d", got)
	}

	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	purgeAsCore(t, s, now.Add(-time.Hour))

	if got := bucketLen(t, s, bucketOnce); got != live {
		t.Errorf("once keys after the purge: %d, want the %d live ones", got, live)
	}
	if got := bucketLen(t, s, bucketValuesTTL); got != live {
		t.Errorf("expiring values after the purge: %d, want the %d live ones", got, live)
	}
	// Before, leases were never purged: every card's posting mark stayed
	// in the file for good.
	if got := bucketLen(t, s, bucketLeasesKV); got != live {
		t.Errorf("leases after the purge: %d, want the %d live ones", got, live)
	}
	// What is left of the loose events is the purges' own checkpoints,
	// which are newer than the cutoff.
	if got := bucketLen(t, s, bucketLooseEvents); got >= 10 {
		t.Errorf("loose events after the purge: %d, want only checkpoints", got)
	}
	for _, i := range []int{0, 1, 2, 7, expiring + live - 1} {
		k := fmt.Sprintf("slack:event:%05d", i)
		first, err := s.Once(ctx, k, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if first == isLive(i) {
			t.Errorf("%s after the purge: first %v", k, first)
		}
	}
}

// TestPurgeDropsEndedRunsABatchAtATime: an agent that ends each run it
// starts leaves a marker per run for the retention period. A purge read
// and dropped every marker in its first transaction, holding the one
// writer, which every ask and answer waits behind, for as long as that
// took (0.15 s a call for 100,000 markers, each call of core's purge
// loop). It now drops the markers past the cutoff a batch at a time, each
// batch its own commit, and keeps those within it.
func TestPurgeDropsEndedRunsABatchAtATime(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	ended := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	const n = 2*purgeBatch + 1
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := s.EndRun(ctx, fmt.Sprint("agent\x00run-", i), ended); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if _, err := s.EndRun(ctx, "agent\x00recent", ended.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}

	// The most run markers one commit dropped, counted around each.
	markers := func() int {
		k := 0
		_ = s.db.View(func(tx *bbolt.Tx) error { k = tx.Bucket(bucketRuns).Stats().KeyN; return nil })
		return k
	}
	most := 0
	s.commits.update = func(fn func(*bbolt.Tx) error) error {
		before := markers()
		err := s.db.Update(fn)
		most = max(most, before-markers())
		return err
	}
	purgeAsCore(t, s, ended.Add(24*time.Hour))
	if left := bucketLen(t, s, bucketRuns); left != 1 {
		t.Fatalf("%d run markers left, want the one within retention", left)
	}
	if most > purgeBatch {
		t.Fatalf("one commit dropped %d run markers; a batch is at most %d", most, purgeBatch)
	}
}
