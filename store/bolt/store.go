package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/internal/membudget"
	"github.com/askbridge/askbridge/store/internal/watches"
)

// DefaultTimeout is how long Open waits for the file lock when
// Options.Timeout is zero.
const DefaultTimeout = 2 * time.Second

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Timeout bounds the wait for the file lock, so a second process
	// gets a clear error instead of hanging. Zero means DefaultTimeout.
	Timeout time.Duration
	// Now is the wall clock used for outbox leases and for deliveries
	// enqueued without a time. Nil means time.Now. Tests inject a
	// simulated clock to age leases without sleeping.
	Now func() time.Time
	// NoSync skips fsync on commit. It trades durability for speed and is
	// meant for tests only.
	NoSync bool
	// AuditKey keys the audit chain of the event log (core/audit). Every
	// process writing one file must use the same key. Empty chains under
	// an empty key, which proves nothing against someone who can write
	// the file: askbridge serve always sets one. Opened under a key
	// other than the one it was last written under, the store notes in
	// the chain, under the new key, the record of its end it found
	// (chain.go, checkEnd), and chains on under the new key; a check of
	// the log then needs the earlier key too (audit.Options.OldKeys).
	AuditKey audit.Key
}

// Store is the bbolt-backed core.Store. It is safe for concurrent use.
type Store struct {
	db      *bbolt.DB
	commits *committer
	path    string
	now     func() time.Time
	audit   audit.Key
	watches watches.Set   // the in-process Waker, told after each commit
	copies  watchedCopies // of the watched questions, for the reads a watch causes
	ready   signals
	budgets *membudget.Budget

	// waiting, when set by a test, is called each time a Claim is about
	// to block, so tests can act on a blocked Claim without sleeping.
	waiting func()

	done      chan struct{} // closed by Close: releases blocked Claims
	closeOnce sync.Once
	closeErr  error
}

var _ core.Store = (*Store)(nil)

// ErrStoreClosed is the cause of errors from a store after Close.
var ErrStoreClosed = errors.New("bolt store is closed")

// errNoChange says a write function found nothing to write. Like a
// refusal it must come before the function's first write: the function
// then leaves its batch's transaction as it found it, and a batch of
// nothing but no-ops is rolled back, so no commit (and no fsync) is paid
// for it.
var errNoChange = errors.New("no change")

// Open opens (creating if needed) the store file at path. It refuses a
// file that exists but is empty, or that is damaged (see openChecked).
// It checks the keyed record of where the audit chain ends before it
// chains anything (checkEnd).
func Open(path string, opts Options) (*Store, error) {
	const op = "open bolt store"
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	db, err := openChecked(path, &bbolt.Options{Timeout: timeout, NoSync: opts.NoSync})
	if errors.Is(err, bbolt.ErrTimeout) {
		return nil, core.Internal(op, fmt.Errorf("%s is locked by another process (waited %s): is another askbridge running on it?", path, timeout))
	}
	if err != nil {
		return nil, core.Internal(op, err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range fixedBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		v, from := tx.Bucket(bucketMeta).Get(metaSchema), schemaVersion
		if v != nil {
			n, err := strconv.Atoi(string(v))
			if err != nil || n > schemaVersion {
				return fmt.Errorf("%s has schema version %q; this askbridge reads up to %d", path, v, schemaVersion)
			}
			from = n
		}
		if v == nil || from < schemaVersion {
			if err := upgrade(tx, from); err != nil { // claimindex.go
				return err
			}
		}
		return checkEnd(tx, opts.AuditKey, now())
	})
	if err != nil {
		_ = db.Close()
		return nil, core.Internal(op, err)
	}
	s := &Store{db: db, commits: newCommitter(db, now), path: path, now: now, audit: opts.AuditKey, done: make(chan struct{}),
		budgets: membudget.New(now)}
	s.watches.First, s.watches.Last = s.copies.watch, s.copies.unwatch
	return s, nil
}

// Path is the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Close lets the writes already submitted commit, refuses later ones,
// releases blocked Claims and closes the file. It is safe to call more
// than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.commits.stop()
		close(s.done)
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// Ping reports whether the file is open and readable, and whether its
// commits succeed: a read works from the mapped file even while every
// write fails (health.go).
func (s *Store) Ping(_ context.Context) error {
	if err := s.view("ping", func(*bbolt.Tx) error { return nil }); err != nil {
		return err
	}
	return s.commits.health.report(s.path, s.now())
}

// Beat swaps the heartbeat: it stores now and returns the previous one.
func (s *Store) Beat(ctx context.Context, now time.Time) (time.Time, error) {
	var prev time.Time
	err := s.update(ctx, "beat", func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(metaHeartbeat); v != nil {
			if err := prev.UnmarshalBinary(v); err != nil {
				return err
			}
		}
		b, err := now.MarshalBinary()
		if err != nil {
			return err
		}
		return meta.Put(metaHeartbeat, b)
	})
	if err != nil {
		return time.Time{}, err
	}
	return prev, nil
}

// update runs fn in a write transaction, shared with other writers' (see
// committer): everything fn writes commits together or not at all, and
// update returns once it is durable. fn must be safe to run again (it may
// be, if a batch-mate fails) and return errNoChange or a refuse()d error
// only before its first write; any other error undoes what it wrote.
// errNoChange reads as success.
func (s *Store) update(ctx context.Context, op string, fn func(*bbolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.commits.do(fn)
	if errors.Is(err, errNoChange) {
		return nil
	}
	return s.wrap(op, err)
}

func (s *Store) view(op string, fn func(*bbolt.Tx) error) error {
	return s.wrap(op, s.db.View(fn))
}

// wrap keeps core's errors as they are and makes the rest internal.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	var closed *core.ClosedError
	var dup *core.DuplicateError
	var stale *core.StaleError
	if errors.As(err, &ce) || errors.As(err, &closed) || errors.As(err, &dup) || errors.As(err, &stale) {
		return err
	}
	if errors.Is(err, bbolt.ErrDatabaseNotOpen) {
		err = ErrStoreClosed
	}
	return core.Internal("bolt "+op, err)
}

// Records are JSON with a version, so a later askbridge can migrate them
// and an older one refuses them instead of misreading.

type questionRecord struct {
	V int `json:"v"`
	// Ver is the question's version (core.Question.Version), which its
	// JSON leaves out; absent (0) on records never changed since create.
	// State is the question's, again. Both come before the question, so
	// that a compare-and-set reads them and stops (decodeHead); records
	// written before had neither here and Ver after the question.
	Ver   int64          `json:"ver,omitempty"`
	State core.State     `json:"state"`
	Q     *core.Question `json:"q"`
}

type runRecord struct {
	V       int       `json:"v"`
	EndedAt time.Time `json:"ended_at"`
}

type lease struct {
	Consumer string    `json:"consumer"`
	At       time.Time `json:"at"`
	Attempts int       `json:"attempts"`
}

type outboxRecord struct {
	V        int           `json:"v"`
	Delivery core.Delivery `json:"delivery"`
	Lease    *lease        `json:"lease,omitempty"`
	// Due is when a retried delivery may be handed out again; zero means
	// now. Prior is how many attempts it had before its retry.
	Due   time.Time `json:"due,omitzero"`
	Prior int       `json:"prior,omitempty"`
	// Pending is set on a delivery enqueued with a delay (pending.go)
	// until a claim takes it; Held is how records written before delays
	// were generic say the same.
	Pending bool      `json:"pending,omitempty"`
	Held    *heldMark `json:"held,omitempty"`
}

func checkVersion(what string, v int) error {
	if v > schemaVersion {
		return fmt.Errorf("%s record has version %d; this askbridge reads up to %d", what, v, schemaVersion)
	}
	return nil
}

func encodeQuestion(q *core.Question) ([]byte, error) {
	return json.Marshal(questionRecord{V: schemaVersion, Ver: q.Version, State: q.State, Q: q})
}

func decodeQuestion(b []byte) (*core.Question, error) {
	var r questionRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode question: %w", err)
	}
	if err := checkVersion("question", r.V); err != nil {
		return nil, err
	}
	if r.Q == nil {
		return nil, errors.New("decode question: empty record")
	}
	r.Q.Normalize()
	r.Q.Version = r.Ver
	return r.Q, nil
}

func decodeOutbox(b []byte) (*outboxRecord, error) {
	var r outboxRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode delivery: %w", err)
	}
	if err := checkVersion("delivery", r.V); err != nil {
		return nil, err
	}
	return &r, nil
}

// Watch returns a channel that receives after any committed change to
// question id, and a function to stop watching.
func (s *Store) Watch(id core.QuestionID) (<-chan struct{}, func()) {
	return s.watches.Chan(id)
}

// WatchFunc calls wake after any committed change to question id, under
// the watches' lock (core.Store.WatchFunc), until the function it returns
// is called.
func (s *Store) WatchFunc(id core.QuestionID, wake func()) func() {
	return s.watches.Func(id, wake)
}

// signals tells blocked Claims that a surface's outbox has new entries.
// Each surface has a channel that is closed on enqueue and replaced by the
// next waiter, so a Claim never polls.
type signals struct {
	mu sync.Mutex
	m  map[core.Surface]chan struct{}
}

// wait returns the channel that will be closed by the next enqueue to
// surface. Take it before looking at the outbox, so nothing is missed.
func (g *signals) wait(surface core.Surface) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = make(map[core.Surface]chan struct{})
	}
	ch := g.m[surface]
	if ch == nil {
		ch = make(chan struct{})
		g.m[surface] = ch
	}
	return ch
}

func (g *signals) fire(surfaces map[core.Surface]bool) {
	if len(surfaces) == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for surface := range surfaces {
		if ch := g.m[surface]; ch != nil {
			close(ch)
			delete(g.m, surface)
		}
	}
}
