package bolt

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// TestRevokingAnUnknownStandingRedoesNoOtherWrite: revoking a standing
// approval that is not there is refused before it writes, so the writes
// committed in the same transaction run once; before, its not-found read
// as a failure after a write, and every write beside it ran again.
func TestRevokingAnUnknownStandingRedoesNoOtherWrite(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	release := holdCommits(t, s)
	var runs atomic.Int32
	counted := make(chan error, 1)
	go func() {
		counted <- s.update(ctx, "counted", func(tx *bbolt.Tx) error {
			runs.Add(1)
			_, err := tx.CreateBucketIfNotExists([]byte("counted"))
			return err
		})
	}()
	queued := func(n int) {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); <-tick.C {
			s.commits.mu.Lock()
			got := len(s.commits.pending)
			s.commits.mu.Unlock()
			if got >= n {
				return
			}
		}
		t.Fatalf("fewer than %d writes queued", n)
	}
	queued(1)
	revoked := make(chan error, 1)
	go func() {
		_, err := s.DeleteStanding(ctx, "st-nope")
		revoked <- err
	}()
	queued(2)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-revoked; !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("revoking an unknown standing approval: %v, want not found", err)
	}
	if err := <-counted; err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the write beside the refused revoke ran %d times, want once", n)
	}
}

// TestValueAfterCloseSaysTheStoreIsClosed: Value on a closed store says
// so, as every other read does; before, it gave bbolt's own error.
func TestValueAfterCloseSaysTheStoreIsClosed(t *testing.T) {
	s := open(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Value(context.Background(), "k"); !errors.Is(err, ErrStoreClosed) {
		t.Errorf("Value after Close: %v, want ErrStoreClosed", err)
	}
}
