package redis_test

import (
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// snapshot is what a refused change must leave as it was: the question,
// its resolution key, and the whole event log.
type snapshot struct {
	state   core.State
	version int64
	res     bool
	events  int
	qevents int
}

func take(t *testing.T, s *redisstore.Store, q *core.Question) snapshot {
	t.Helper()
	ctx := t.Context()
	got := mustGet(t, s, q.ID)
	all, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := s.QuestionEvents(ctx, q.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, resKey := redisstore.DocumentKeys(s, q.ID)
	n, err := newClient(t).Exists(ctx, resKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{state: got.State, version: got.Version, res: got.Resolution != nil || n > 0, events: len(all), qevents: len(mine)}
}

// A change with an event the store cannot append is refused whole, before
// anything is written: not half a close (a resolution and an answered
// event on a question still open), which Purge would then take for a
// closed question and drop.
func TestChangeWithABadEventChangesNothing(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, redisstore.Options{})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	q = mustGet(t, s, q.ID)
	before := take(t, s, q)

	// An event without a kind: refused by the store before the call.
	c, err := core.Next(q, answer(q, "ada", t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	c.Events = append(c.Events, core.Event{})
	if _, err := s.Commit(ctx, c); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("a change with a kindless event: %v, want invalid", err)
	}
	if after := take(t, s, q); after != before {
		t.Fatalf("a refused change left %+v, was %+v", after, before)
	}

	// An event that reaches the script without its digest (a caller
	// that skipped the checks): the script refuses it before it writes
	// the resolution or the events before it.
	c, err = core.Next(q, answer(q, "ada", t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	c.Events = append(c.Events, core.Event{QuestionID: q.ID, RunID: q.RunID, At: t0.Add(time.Minute), Kind: core.EventRefused, Surface: core.SurfaceSystem})
	if err := redisstore.CommitUnchecked(ctx, s, c, 1); err == nil {
		t.Fatal("the script took an event without its digest")
	}
	if after := take(t, s, q); after != before {
		t.Fatalf("a refused script left %+v, was %+v", after, before)
	}

	// Nothing is closed, so nothing is purged.
	if n, err := s.Purge(ctx, t0.Add(24*time.Hour), 0); err != nil || n != 0 {
		t.Fatalf("purge after the refused changes: %d, %v; want 0", n, err)
	}
	if got := mustGet(t, s, q.ID); got.State != core.StateOpen {
		t.Fatalf("after the purge: %s", got.State)
	}
	// And the question still closes as it should.
	if got, err := s.Resolve(ctx, answer(q, "bob", t0.Add(2*time.Minute))); err != nil || got.State != core.StateAnswered {
		t.Fatalf("a good close after the refused ones: %v, %v", got, err)
	}
	if got := kinds(t, s, q.ID); len(got) != 2 || got[1] != core.EventAnswered {
		t.Fatalf("events of the question: %v", got)
	}
}

// Purge drops only questions that are closed: an open one found in the
// closed index (as a close cut short by a failed script left it, before
// closes were checked whole) is left where it is.
func TestPurgeKeepsAnOpenQuestionTheClosedIndexNames(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, redisstore.Options{})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	if err := newClient(t).ZAdd(ctx, redisstore.ClosedKey(s, 0), goredis.Z{Score: float64(t0.Add(time.Minute).UnixMilli()), Member: string(q.ID)}).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Purge(ctx, t0.Add(24*time.Hour), 0); err != nil || n != 0 {
		t.Fatalf("purge: %d, %v; want 0", n, err)
	}
	if got, err := s.Get(ctx, q.ID); err != nil || got.State != core.StateOpen {
		t.Fatalf("the open question after a purge: %v, %v", got, err)
	}
	if evs, err := s.QuestionEvents(ctx, q.ID, 0); err != nil || len(evs) != 1 {
		t.Fatalf("its events after a purge: %v, %v", evs, err)
	}
	if _, err := s.Resolve(ctx, answer(q, "ada", t0.Add(2*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Purge(ctx, t0.Add(24*time.Hour), 0); err != nil || n != 1 {
		t.Fatalf("purge once closed: %d, %v; want 1", n, err)
	}
	if _, err := s.Get(ctx, q.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("purged: %v", err)
	}
}
