package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// TestLeaseAndOnceReportTheirCommittedRun: a write function may run
// again after its batch is rolled back (commit.go), and what its caller
// is told must be what the run that committed found. Between the two runs
// the wall clock steps back (as NTP may step it): the first run finds a
// lease and a key expired and takes them, the second finds them live and
// writes nothing, so the callers must be told false, not the first run's
// true.
func TestLeaseAndOnceReportTheirCommittedRun(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	cur, queued := t0, []time.Time(nil)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if len(queued) > 0 {
			cur, queued = queued[0], queued[1:]
		}
		return cur
	}
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{Now: clock, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if ok, err := s.Lease(ctx, "poller", "other", time.Hour); err != nil || !ok {
		t.Fatalf("other's lease: %v, %v", ok, err)
	}
	if ok, err := s.Once(ctx, "seen", time.Hour); err != nil || !ok {
		t.Fatalf("first sighting: %v, %v", ok, err)
	}

	// A committer the test drives: it decides what shares a batch.
	s.commits.stop()
	c := &committer{db: s.db, kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	s.commits = c
	run := func(call func() (bool, error)) bool {
		t.Helper()
		mu.Lock()
		queued = []time.Time{t0.Add(2 * time.Hour), t0.Add(30 * time.Minute)}
		mu.Unlock()
		type result struct {
			ok  bool
			err error
		}
		done := make(chan result, 1)
		go func() {
			ok, err := call()
			done <- result{ok, err}
		}()
		// The write kicks the committer once it is queued.
		select {
		case <-c.kick:
		case <-time.After(10 * time.Second):
			t.Fatal("the write never reached the committer")
		}
		batch := c.take()
		if len(batch) == 0 {
			t.Fatal("the committer was kicked with nothing queued")
		}
		// A batch-mate fails after it: the batch is run again without it.
		fail := &commitReq{done: make(chan struct{}), fn: func(*bbolt.Tx) error { return errors.New("disk says no") }}
		c.commit(append(batch, fail))
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.ok
	}
	if run(func() (bool, error) { return s.Lease(ctx, "poller", "me", time.Hour) }) {
		t.Error("lease reported taken, but the run that committed found it held by another")
	}
	if run(func() (bool, error) { return s.Once(ctx, "seen", time.Hour) }) {
		t.Error("once reported a first sighting, but the run that committed found the key seen")
	}

	go c.loop()
	// What was stored agrees: other still holds the lease, the key is seen.
	if ok, err := s.Lease(context.Background(), "poller", "me", time.Hour); err != nil || ok {
		t.Errorf("lease by me at 09:30: %v, %v; want it other's", ok, err)
	}
	if ok, err := s.Once(context.Background(), "seen", time.Hour); err != nil || ok {
		t.Errorf("once at 09:30: %v, %v; want the key seen", ok, err)
	}
}
