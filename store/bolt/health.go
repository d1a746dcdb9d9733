package bolt

import (
	"fmt"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// What the one writer knows of its commits, for Ping (the readiness
// probe). A read works from the mapped file whatever the disk does, so
// a store whose every commit fails (the disk full, the file system
// remounted read-only, an I/O error) still answers reads: a probe that
// only read would say ready while every ask and answer is refused.
//
// Two kinds of failed commit differ. Most leave the file as it was:
// bbolt rolls the transaction back before its meta page is written (the
// file could not grow, a page could not be written), the next commit may
// well succeed, and the failure is reported until one does and for
// failingFor after the last. One does not: when the sync of the meta
// page fails, that page is already in the mapping, so the transaction
// its callers were told had failed is the one every later transaction
// builds on, while the disk may not hold it (after a failed sync the
// kernel may drop the unwritten pages and not say so again). Writing on
// would acknowledge changes as durable on top of what may be lost (law
// 3), so the store stops writing: every later write fails, and so does
// Ping, until the process opens the file again.

// failingFor is how long Ping reports a failed commit after it, even if
// a later one succeeded: a small write (the heartbeat) may find the free
// pages a larger one (a question, its events and deliveries) does not,
// and a probe that flipped with each would never read as failing.
const failingFor = time.Minute

// hungAfter is how long a commit may run before Ping says the disk may
// be hung: a sync that never returns (a dead NFS server, a failing disk)
// fails nothing, it just holds every write behind it, while reads, and
// a probe that only read, go on as if all were well. A commit of the
// largest batch takes well under a second on a working disk.
const hungAfter = 30 * time.Second

// health is the committer's record of failed commits; its goroutine
// writes it, Ping reads it.
type health struct {
	mu      sync.Mutex
	since   time.Time // when the commit under way began; zero between commits
	last    error     // the last failed commit's error
	lastAt  time.Time // when it failed, on the store's clock
	failing bool      // the newest commit failed
	broken  error     // set once writes are stopped; never cleared
}

// committed notes the outcome of a transaction that began as txid: err is
// the commit's own failure (not a write function's). live is the id of
// the transaction now visible to readers, asked only after a failure.
func (h *health) committed(txid int, err error, at time.Time, live func() int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.failing = false
		return
	}
	h.last, h.lastAt, h.failing = err, at, true
	if h.broken == nil && live() >= txid {
		h.broken = err
	}
}

// begin notes that a commit begins at now; end, that it returned.
func (h *health) begin(now time.Time) { h.setSince(now) }
func (h *health) end()                { h.setSince(time.Time{}) }

func (h *health) setSince(t time.Time) {
	h.mu.Lock()
	h.since = t
	h.mu.Unlock()
}

// stopped is the error every write gets once writes are stopped, or nil.
func (h *health) stopped() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.broken == nil {
		return nil
	}
	return &writesStopped{h.broken}
}

// report is Ping's word on the commits at now: nil while they succeed.
// Its message says what is wrong without the file's path, as it goes to
// an unauthenticated probe; the cause (with the path) is for the log.
func (h *health) report(path string, now time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	const op = "bolt ping"
	if h.broken != nil {
		return &core.Error{Code: core.CodeInternal, Op: op, Err: fmt.Errorf("%s: %w", path, &writesStopped{h.broken}),
			Message: "a write to the store file failed after it had taken effect; writes are stopped until askbridge is restarted"}
	}
	if !h.since.IsZero() && now.Sub(h.since) > hungAfter {
		return &core.Error{Code: core.CodeInternal, Op: op, Err: fmt.Errorf("a commit to %s has run since %s", path, h.since.UTC().Format(time.RFC3339)),
			Message: fmt.Sprintf("a write to the store file has not finished in %s: the disk may be hung", now.Sub(h.since).Round(time.Second))}
	}
	if h.failing || (h.last != nil && now.Sub(h.lastAt) < failingFor) {
		return &core.Error{Code: core.CodeInternal, Op: op, Err: fmt.Errorf("the last commit to %s failed at %s: %w", path, h.lastAt.UTC().Format(time.RFC3339), h.last),
			Message: "writes to the store file are failing"}
	}
	return nil
}

// writesStopped is why a write is refused once a commit failed after it
// had taken effect (see above).
type writesStopped struct{ cause error }

func (e *writesStopped) Error() string {
	return fmt.Sprintf("writes are stopped: a commit failed after it had taken effect (%v), so the disk may not hold what later commits build on; restart askbridge to open the file again", e.cause)
}

func (e *writesStopped) Unwrap() error { return e.cause }

// liveTx is the id of the transaction readers of db now see.
func liveTx(db *bbolt.DB) int {
	id := 0
	if err := db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		return 0
	}
	return id
}
