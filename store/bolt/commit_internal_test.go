package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

var testBucket = []byte("commit-test")

// newCommitDB is a bare bbolt file with one bucket and a committer that
// is not started: tests hand it batches directly, so what shares a
// transaction is decided by the test, not by timing.
func newCommitDB(t *testing.T) (*bbolt.DB, *committer) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucket(testBucket)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return db, &committer{db: db}
}

// write is a request that puts key and counts its runs, and notes the
// transaction it committed in.
type write struct {
	req  *commitReq
	runs int
	txID int
}

func newWrite(key string, then error) *write {
	w := &write{}
	w.req = &commitReq{done: make(chan struct{}), fn: func(tx *bbolt.Tx) error {
		w.runs++
		if err := tx.Bucket(testBucket).Put([]byte(key), []byte("v")); err != nil {
			return err
		}
		tx.OnCommit(func() { w.txID = tx.ID() })
		return then
	}}
	return w
}

func request(fn func(*bbolt.Tx) error) *commitReq {
	return &commitReq{fn: fn, done: make(chan struct{})}
}

func keys(t *testing.T, db *bbolt.DB) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	if err := db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(testBucket).ForEach(func(k, _ []byte) error {
			got[string(k)] = true
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func closed(r *commitReq) bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func TestCommitSharesOneTransaction(t *testing.T) {
	db, c := newCommitDB(t)
	var ws []*write
	var batch []*commitReq
	for i := range 10 {
		w := newWrite(fmt.Sprint("k", i), nil)
		ws, batch = append(ws, w), append(batch, w.req)
	}
	c.commit(batch)
	for i, w := range ws {
		if !closed(w.req) || w.req.err != nil || w.runs != 1 {
			t.Fatalf("write %d: answered %v, err %v, runs %d", i, closed(w.req), w.req.err, w.runs)
		}
		if w.txID != ws[0].txID || w.txID == 0 {
			t.Fatalf("write %d committed in tx %d, write 0 in tx %d: want one shared commit", i, w.txID, ws[0].txID)
		}
	}
	if got := keys(t, db); len(got) != 10 {
		t.Fatalf("stored %v", got)
	}
}

// A function that fails after writing must leave nothing behind, and its
// batch-mates must still commit: the batch is redone without it.
func TestCommitFailureUndoesOnlyTheFailingWrite(t *testing.T) {
	db, c := newCommitDB(t)
	boom := errors.New("disk says no")
	before, bad, after := newWrite("before", nil), newWrite("bad", boom), newWrite("after", nil)
	c.commit([]*commitReq{before.req, bad.req, after.req})

	if !closed(bad.req) || !errors.Is(bad.req.err, boom) {
		t.Fatalf("failing write: answered %v, err %v", closed(bad.req), bad.req.err)
	}
	for name, w := range map[string]*write{"before": before, "after": after} {
		if !closed(w.req) || w.req.err != nil || w.txID == 0 {
			t.Fatalf("%s: answered %v, err %v, tx %d", name, closed(w.req), w.req.err, w.txID)
		}
	}
	if before.runs != 2 || after.runs != 1 || bad.runs != 1 {
		t.Fatalf("runs: before %d, bad %d, after %d; want 2, 1, 1", before.runs, bad.runs, after.runs)
	}
	if got := keys(t, db); !got["before"] || !got["after"] || got["bad"] || len(got) != 2 {
		t.Fatalf("stored %v, want before and after only", got)
	}
}

// A refusal (decided before any write) does not undo its batch-mates, and
// its caller gets the refusal itself, unwrapped.
func TestCommitRefusalKeepsTheBatch(t *testing.T) {
	db, c := newCommitDB(t)
	no := core.Errorf(core.CodeConflict, "test", "already there")
	w1, w2 := newWrite("a", nil), newWrite("b", nil)
	ref := request(func(*bbolt.Tx) error { return refuse(no) })
	nop := request(func(*bbolt.Tx) error { return errNoChange })
	c.commit([]*commitReq{w1.req, ref, nop, w2.req})

	if ref.err != no {
		t.Fatalf("refusal reached its caller as %#v", ref.err)
	}
	if nop.err != errNoChange {
		t.Fatalf("no-op reached its caller as %v", nop.err)
	}
	if w1.runs != 1 || w2.runs != 1 || w1.txID != w2.txID {
		t.Fatalf("runs %d and %d in tx %d and %d: want one run each, one commit", w1.runs, w2.runs, w1.txID, w2.txID)
	}
	if got := keys(t, db); len(got) != 2 {
		t.Fatalf("stored %v", got)
	}
}

// A batch that wrote nothing is rolled back, not committed.
func TestCommitOfNothingIsNoCommit(t *testing.T) {
	db, c := newCommitDB(t)
	committed := false
	r := request(func(tx *bbolt.Tx) error {
		tx.OnCommit(func() { committed = true })
		return refuse(core.ErrNotFound)
	})
	st := db.Stats()
	before := st.TxStats.GetWrite()
	c.commit([]*commitReq{r, request(func(*bbolt.Tx) error { return errNoChange })})
	if committed || !errors.Is(r.err, core.ErrNotFound) {
		t.Fatalf("committed %v, err %v", committed, r.err)
	}
	st = db.Stats()
	if after := st.TxStats.GetWrite(); after != before {
		t.Fatalf("%d pages written for a batch of refusals", after-before)
	}
}

func TestCommitPanicIsThatWritesError(t *testing.T) {
	db, c := newCommitDB(t)
	ok := newWrite("ok", nil)
	bad := request(func(tx *bbolt.Tx) error {
		_ = tx.Bucket(testBucket).Put([]byte("half"), []byte("v"))
		panic("bug")
	})
	c.commit([]*commitReq{bad, ok.req})
	if bad.err == nil || ok.req.err != nil {
		t.Fatalf("panicking write err %v, other %v", bad.err, ok.req.err)
	}
	if got := keys(t, db); !got["ok"] || got["half"] {
		t.Fatalf("stored %v", got)
	}
}

// Writes submitted before stop are committed; later ones are refused.
func TestCommitterStop(t *testing.T) {
	db, c := newCommitDB(t)
	c = newCommitter(db, nil)
	var wg sync.WaitGroup
	errs := make([]error, 50)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.do(func(tx *bbolt.Tx) error {
				return tx.Bucket(testBucket).Put([]byte(fmt.Sprint("k", i)), nil)
			})
		}()
	}
	wg.Wait()
	c.stop()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if got := keys(t, db); len(got) != 50 {
		t.Fatalf("stored %d keys, want 50", len(got))
	}
	if err := c.do(func(*bbolt.Tx) error { return nil }); !errors.Is(err, bbolt.ErrDatabaseNotOpen) {
		t.Fatalf("write after stop: %v", err)
	}
	c.stop() // twice is fine
}

// Through the store: a write after Close is a closed-store error, and
// the writes in flight at Close are durable.
func TestStoreCloseFinishesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.SetValue(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetValue(ctx, "k", "w"); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("write after close: %v", err)
	}
	s, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Value(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("value after reopen %q, %v", v, err)
	}
}

// A create refused because its run has ended must leave its idempotency
// key unstored even when it shares a commit with other writes: the
// refusal is decided before the create's first write.
func TestRefusedCreateSharingACommitStoresNothing(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	if _, err := s.EndRun(ctx, core.Run{Agent: "agent", ID: "ended"}.Key(), at); err != nil {
		t.Fatal(err)
	}
	ask := func(run core.RunID, key string) *core.Question {
		return &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "agent", RunID: run,
			Text: "Which?", Reversibility: core.Reversible, CreatedAt: at, State: core.StateOpen,
			Idempotency: &core.Idempotency{Key: key, Fingerprint: "f"}}
	}
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			q := ask("ended", fmt.Sprint("key-", i))
			if err := s.Create(ctx, q, core.Event{QuestionID: q.ID, At: at, Kind: core.EventAsked}, nil); core.ErrorCode(err) != core.CodeConflict {
				t.Errorf("create into an ended run: %v, want conflict", err)
			}
		}()
		go func() {
			defer wg.Done()
			if err := s.SetValue(ctx, fmt.Sprint("v", i), "x"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i := range n {
		q := ask("live", fmt.Sprint("key-", i))
		if err := s.Create(ctx, q, core.Event{QuestionID: q.ID, At: at, Kind: core.EventAsked}, nil); err != nil {
			t.Fatalf("key-%d after its refused create: %v, want a new question", i, err)
		}
	}
}
