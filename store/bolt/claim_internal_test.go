package bolt

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	bbolt "go.etcd.io/bbolt"
)

// blockedClaim starts a Claim that will block, and returns once it is
// blocked (the store's waiting hook has fired), with its result channel.
func blockedClaim(t *testing.T, s *Store, ctx context.Context) <-chan claimResult {
	t.Helper()
	blocked := make(chan struct{})
	var once bool
	s.waiting = func() {
		if !once {
			once = true
			close(blocked)
		}
	}
	done := make(chan claimResult, 1)
	go func() {
		got, err := s.Claim(ctx, core.SurfaceSlack, "c1", 10, time.Hour, time.Hour)
		done <- claimResult{got, err}
	}()
	select {
	case <-blocked:
	case r := <-done:
		t.Fatalf("claim returned without blocking: %+v", r)
	}
	return done
}

type claimResult struct {
	got []core.Delivery
	err error
}

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// A test that fails waits for the hour-long block; wait() bounds that so
// a broken wake-up fails fast instead of hanging the run.
func wait(t *testing.T, done <-chan claimResult) claimResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("blocked Claim was not released")
		return claimResult{}
	}
}

func TestBlockedClaimWokenByEnqueue(t *testing.T) {
	s := open(t)
	done := blockedClaim(t, s, context.Background())
	// An enqueue to another surface does not release it...
	digest := core.Delivery{Key: "digest-1", Kind: core.DeliverDigest, Surface: core.SurfaceDiscord, Route: "ops"}
	if err := s.Enqueue(context.Background(), []core.Delivery{digest}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		t.Fatalf("claim on slack released by a discord enqueue: %+v", r)
	default:
	}
	// ...one to its own surface does.
	digest.Key, digest.Surface = "digest-2", core.SurfaceSlack
	if err := s.Enqueue(context.Background(), []core.Delivery{digest}); err != nil {
		t.Fatal(err)
	}
	r := wait(t, done)
	if r.err != nil || len(r.got) != 1 || r.got[0].Key != "digest-2" || r.got[0].Attempts != 1 || r.got[0].CreatedAt.IsZero() {
		t.Fatalf("woken claim = %+v", r)
	}
}

func TestBlockedClaimReleasedByCloseAndContext(t *testing.T) {
	s := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := blockedClaim(t, s, ctx)
	cancel()
	if r := wait(t, done); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled claim: %+v", r)
	}

	done = blockedClaim(t, s, context.Background())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, done); !errors.Is(r.err, ErrStoreClosed) {
		t.Fatalf("claim after close: %+v", r)
	}
	if err := s.Ping(context.Background()); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("ping after close: %v", err)
	}
}

// TestEmptyClaimKeepsOutOfTheCommitQueue: a claim that finds nothing due
// (its deliveries wait on their budgets) answers without waiting for the
// writes queued for commit, and so holds none of them up. A write is held
// in the commit queue while the claim looks; before, the claim's scan ran
// in the queue's transaction and waited for it.
func TestEmptyClaimKeepsOutOfTheCommitQueue(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	d := core.Delivery{Key: "digest-1", Kind: core.DeliverDigest, Surface: core.SurfaceSlack, Route: "ops"}
	if err := s.Enqueue(ctx, []core.Delivery{d}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Claim(ctx, core.SurfaceSlack, "c1", 10, time.Hour, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %+v %v", got, err)
	}
	if err := s.Retry(ctx, got[0], "c1", time.Hour); err != nil { // due in an hour: nothing to claim now
		t.Fatal(err)
	}
	release := holdCommits(t, s)
	claimed := make(chan claimResult, 1)
	go func() {
		got, err := s.Claim(ctx, core.SurfaceSlack, "c1", 10, time.Hour, 0)
		claimed <- claimResult{got, err}
	}()
	r := wait(t, claimed)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if r.err != nil || len(r.got) != 0 {
		t.Fatalf("claim with nothing due: %+v", r)
	}
}

// holdCommits holds the commit queue: a write runs and waits inside its
// transaction until release, so the writes queued meanwhile commit
// together after it. release returns the held write's error; a failed
// test releases it too.
func holdCommits(t *testing.T, s *Store) (release func() error) {
	t.Helper()
	started, let := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(let) }) })
	held := make(chan error, 1)
	go func() {
		held <- s.update(context.Background(), "held", func(*bbolt.Tx) error {
			close(started)
			<-let
			return errNoChange
		})
	}()
	<-started
	return func() error {
		once.Do(func() { close(let) })
		return <-held
	}
}
