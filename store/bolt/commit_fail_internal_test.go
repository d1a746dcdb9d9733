package bolt

import (
	"errors"
	"syscall"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// A commit that fails (the file could not grow, a page could not be
// written) fails every write of its batch, those that wrote and those
// refused or with nothing to write alike, since a refusal or a no-op may
// have been decided on a batch-mate's write that is now undone: each
// caller is told the commit's error, and nothing is stored.
func TestCommitFailureFailsEveryWriteOfTheBatch(t *testing.T) {
	db, c := newCommitDB(t)
	c.update = func(fn func(*bbolt.Tx) error) error {
		return db.Update(func(tx *bbolt.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return syscall.ENOSPC // as bbolt's commit fails: the transaction rolls back
		})
	}
	w1, w2 := newWrite("a", nil), newWrite("b", nil)
	ref := request(func(*bbolt.Tx) error { return refuse(core.Errorf(core.CodeConflict, "test", "taken")) })
	nop := request(func(*bbolt.Tx) error { return errNoChange })
	batch := []*commitReq{w1.req, ref, nop, w2.req}
	c.commit(batch)
	for i, r := range []*commitReq{w1.req, ref, nop, w2.req} {
		if !closed(r) || !errors.Is(r.err, syscall.ENOSPC) {
			t.Errorf("write %d: answered %v, err %v; want the commit's error", i, closed(r), r.err)
		}
	}
	if got := keys(t, db); len(got) != 0 {
		t.Fatalf("stored %v after a failed commit", got)
	}
	if c.health.report("c.db", c.clock()) == nil {
		t.Fatal("the failed commit is not reported")
	}
}
