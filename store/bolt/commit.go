package bolt

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// Group commit. bbolt runs one write transaction at a time and pays one
// fsync per commit, so writers that each commit alone queue behind the
// disk: fifty concurrent callers go no faster than one. The committer
// runs every write the store makes in one goroutine that takes whatever
// writes are waiting, applies them in one transaction, one after another,
// and commits once for all of them. Each write still sees the writes
// before it, and each caller is answered only after the commit that holds
// its write is durable (law 3).
//
// A lone write is not delayed: the committer starts a commit as soon as
// anything waits, and what arrives during that commit forms the next one.
// That is the difference from bbolt's DB.Batch, which waits up to
// MaxBatchDelay for company.
//
// A write function may run more than once: when a later function of the
// same batch fails, the batch is rolled back and run again without it.
// So a write function keeps its effects inside the transaction and resets
// whatever it reports to its caller at its start; wake-ups and other
// in-process effects happen after the commit, in the caller.

// maxBatch bounds how many writes share one transaction, so that one
// commit stays short and a retry after a failure redoes little.
const maxBatch = 256

// refusal is how a write function says "no, and I wrote nothing": a coded
// refusal decided before the function's first write. The batch it ran in
// can then still commit the others' writes. Any other error rolls the
// whole batch back.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// refuse marks err as decided before any write (see refusal). Returning
// it after a write would commit a partial change: only refuse before.
func refuse(err error) error { return refusal{err} }

type commitReq struct {
	fn   func(*bbolt.Tx) error
	err  error
	done chan struct{}
}

type committer struct {
	db *bbolt.DB
	// now is the store's clock, for when a commit failed (health.go).
	now func() time.Time
	// update runs a write transaction in place of db.Update (nil) for
	// tests: to fail a commit after it took effect, as bbolt's does when
	// the sync of its meta page fails, or to look at each commit.
	update func(func(*bbolt.Tx) error) error
	health health

	mu      sync.Mutex
	pending []*commitReq
	spare   []*commitReq
	closed  bool
	kick    chan struct{} // buffered 1: "something is pending"
	stopped chan struct{} // closed when the goroutine has finished

	// committed counts the transactions committed (each an fsync unless
	// NoSync), for the benchmarks that report commits per operation.
	committed atomic.Int64
}

func newCommitter(db *bbolt.DB, now func() time.Time) *committer {
	c := &committer{db: db, now: now, kick: make(chan struct{}, 1), stopped: make(chan struct{})}
	go c.loop()
	return c
}

// do runs fn in a write transaction shared with the writes waiting beside
// it and returns when that transaction has committed (or rolled back).
// The error is fn's own (a refusal unwrapped), or the commit's.
func (c *committer) do(fn func(*bbolt.Tx) error) error {
	r := &commitReq{fn: fn, done: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return bbolt.ErrDatabaseNotOpen
	}
	c.pending = append(c.pending, r)
	select {
	case c.kick <- struct{}{}:
	default: // already kicked
	}
	c.mu.Unlock()
	<-r.done
	return r.err
}

// stop refuses new writes, lets the goroutine finish those already
// waiting, and returns once it has.
func (c *committer) stop() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.kick)
	}
	c.mu.Unlock()
	<-c.stopped
}

func (c *committer) loop() {
	defer close(c.stopped)
	for range c.kick {
		for batch := c.take(); len(batch) > 0; batch = c.take() {
			c.commit(batch)
		}
	}
	// kick is closed: nothing more can arrive; finish what did.
	for batch := c.take(); len(batch) > 0; batch = c.take() {
		c.commit(batch)
	}
}

// take removes up to maxBatch waiting writes, oldest first.
func (c *committer) take() []*commitReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.pending), maxBatch)
	if n == 0 {
		return nil
	}
	batch := append(c.spare[:0], c.pending[:n]...)
	c.pending = append(c.pending[:0], c.pending[n:]...)
	c.spare = nil
	return batch
}

// commit applies batch in one transaction. A function that fails with an
// error other than a refusal or errNoChange may have written part of its
// change, so the transaction is rolled back, that function is told its
// error, and the rest run again in a fresh transaction. A batch in which
// nothing was written is rolled back instead of committed, so refusals
// and no-ops cost no fsync. A commit that fails fails every write of its
// batch, and is noted for Ping; once one has failed after taking effect,
// no batch runs (health.go).
func (c *committer) commit(batch []*commitReq) {
	if err := c.health.stopped(); err != nil {
		for _, r := range batch {
			r.err = err
			close(r.done)
		}
		c.recycle(batch)
		return
	}
	for len(batch) > 0 {
		failed, txid := -1, 0
		c.health.begin(c.clock())
		err := c.run(func(tx *bbolt.Tx) error {
			txid = tx.ID()
			wrote := false
			for i, r := range batch {
				err := call(r.fn, tx)
				var ref refusal
				switch {
				case err == nil:
					wrote = true
				case errors.Is(err, errNoChange):
					err = errNoChange
				case errors.As(err, &ref):
					err = ref.err
				default:
					failed = i
					r.err = err
					return err
				}
				r.err = err
			}
			if !wrote {
				return errNoChange
			}
			return nil
		})
		c.health.end()
		if err == nil {
			c.committed.Add(1)
		}
		if failed < 0 && txid > 0 && !errors.Is(err, errNoChange) {
			// The commit's own outcome, not a function's nor a batch of
			// no-ops'; txid 0: no transaction began (the file is closed).
			c.health.committed(txid, err, c.clock(), func() int { return liveTx(c.db) })
		}
		if failed >= 0 {
			close(batch[failed].done)
			batch = slices.Delete(batch, failed, failed+1)
			continue
		}
		for _, r := range batch {
			if err != nil && !errors.Is(err, errNoChange) {
				r.err = err // the commit itself failed: nothing was stored
			}
			close(r.done)
		}
		break
	}
	c.recycle(batch)
}

// recycle keeps batch's array for the next take, holding no request.
func (c *committer) recycle(batch []*commitReq) {
	clear(batch)
	c.mu.Lock()
	c.spare = batch[:0]
	c.mu.Unlock()
}

// run is db.Update, or the test's update.
func (c *committer) run(fn func(*bbolt.Tx) error) error {
	if c.update != nil {
		return c.update(fn)
	}
	return c.db.Update(fn)
}

// clock is the store's clock, or the wall clock for a bare committer.
func (c *committer) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// call runs fn, turning a panic into that function's error: it runs on
// the committer's goroutine, where a panic would end the process rather
// than the one request.
func call(fn func(*bbolt.Tx) error, tx *bbolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in a write transaction: %v", p)
		}
	}()
	return fn(tx)
}
