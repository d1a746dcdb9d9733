package redis_test

import (
	"errors"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestReadToChangeUsesTheWatchersCopy: for a watched question,
// ReadToChange answers from what the watcher's read returned, with no
// round trip (the record can be gone from Redis and it still answers),
// until a wake-up, the last watcher's stop or a resubscription says the
// copy may be stale. Unwatched, it reads Redis.
func TestReadToChangeUsesTheWatchersCopy(t *testing.T) {
	prefix := randomPrefix()
	a := newStore(t, redisstore.Options{Prefix: prefix})
	b := newStore(t, redisstore.Options{Prefix: prefix}) // another replica
	raw := newClient(t)
	ctx := t.Context()
	drop := func(id core.QuestionID) { // the record goes from Redis, unannounced
		t.Helper()
		key, _, _, _, _, _, _, _ := redisstore.Keys(a, id)
		if err := raw.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(id core.QuestionID, when string) {
		t.Helper()
		if _, err := a.ReadToChange(ctx, id); core.ErrorCode(err) != core.CodeNotFound {
			t.Fatalf("%s: ReadToChange gave %v, want Redis's answer (not found)", when, err)
		}
	}

	unwatched := question(0, "run-1", t0)
	mustCreate(t, a, unwatched)
	mustGet(t, a, unwatched.ID)
	drop(unwatched.ID)
	gone(unwatched.ID, "unwatched")

	q := question(0, "run-1", t0)
	mustCreate(t, a, q)
	ch, stop := a.Watch(q.ID)
	read := mustGet(t, a, q.ID)
	drop(q.ID)
	got, err := a.ReadToChange(ctx, q.ID)
	if err != nil || got.ID != q.ID || !got.Open() || got.Text != read.Text {
		t.Fatalf("watched: ReadToChange gave %+v, %v; want the watcher's read", got, err)
	}
	if _, err := a.Get(ctx, q.ID); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("Get answered from the copy (%v); only ReadToChange may", err)
	}
	stop()
	gone(q.ID, "after the last watcher stopped")
	select {
	case <-ch:
		t.Fatal("a stopped watch was signalled")
	default:
	}

	// A change made on another replica: its wake-up drops the copy.
	q2 := question(0, "run-1", t0)
	mustCreate(t, a, q2)
	ch2, stop2 := a.Watch(q2.ID)
	defer stop2()
	mustGet(t, a, q2.ID)
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C", ID: "1", Delivery: "d"}
	if err := b.RecordMessage(ctx, q2.ID, ref, core.Event{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch2, "a card recorded on the other replica")
	if got, err := a.ReadToChange(ctx, q2.ID); err != nil || len(got.Messages) != 1 {
		t.Fatalf("after the wake-up: ReadToChange gave %+v, %v; want the card", got, err)
	}

	// A resubscription drops every copy: wake-ups may have been lost.
	q3 := question(0, "run-1", t0)
	mustCreate(t, a, q3)
	ch3, stop3 := a.Watch(q3.ID)
	defer stop3()
	mustGet(t, a, q3.ID)
	drop(q3.ID)
	if err := raw.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch3, "resubscription")
	gone(q3.ID, "after a resubscription")
}

// TestResolveChecksAStaleCopy: a transition built on a copy that trails
// a change made elsewhere is refused if that change closed the question,
// and otherwise applied to the question as stored, whose change it keeps.
func TestResolveChecksAStaleCopy(t *testing.T) {
	prefix := randomPrefix()
	a := newStore(t, redisstore.Options{Prefix: prefix})
	b := newStore(t, redisstore.Options{Prefix: prefix})
	ctx := t.Context()

	closed := question(0, "run-1", t0)
	mustCreate(t, a, closed)
	ch, stop := a.Watch(closed.ID)
	defer stop()
	stale := mustGet(t, a, closed.ID)
	if _, err := b.Resolve(ctx, answer(closed, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch, "the close on the other replica")
	redisstore.KeepFresh(a, stale) // as if that wake-up were still on its way
	read, err := a.ReadToChange(ctx, closed.ID)
	if err != nil || !read.Open() {
		t.Fatalf("ReadToChange gave %+v, %v; want the stale open copy", read, err)
	}
	tr := answer(closed, "bob", t0)
	tr.Read = read
	_, err = a.Resolve(ctx, tr)
	var ce *core.ClosedError
	if !errors.As(err, &ce) || ce.Question.Resolution == nil || ce.Question.Resolution.Decider.ID != "ada" {
		t.Fatalf("a close built on a stale copy: %v, want a ClosedError naming ada", err)
	}

	carded := question(0, "run-1", t0)
	mustCreate(t, a, carded)
	ch2, stop2 := a.Watch(carded.ID)
	defer stop2()
	stale = mustGet(t, a, carded.ID)
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C", ID: "1", Delivery: "d"}
	if err := b.RecordMessage(ctx, carded.ID, ref, core.Event{}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch2, "a card recorded on the other replica")
	redisstore.KeepFresh(a, stale)
	tr = answer(carded, "bob", t0)
	if tr.Read, err = a.ReadToChange(ctx, carded.ID); err != nil || len(tr.Read.Messages) != 0 {
		t.Fatalf("ReadToChange gave %+v, %v; want the copy without the card", tr.Read, err)
	}
	after, err := a.Resolve(ctx, tr)
	if err != nil || after.State != core.StateAnswered || len(after.Messages) != 1 || after.Messages[0].ID != "1" {
		t.Fatalf("a close built on a copy missing a card: %+v, %v; want the question as stored, closed", after, err)
	}
	if got := mustGet(t, b, carded.ID); len(got.Messages) != 1 || got.State != core.StateAnswered {
		t.Fatalf("stored: %+v", got)
	}
}

// TestStaleCopyDoesNotRefuseAnEscalation: the escalation route's decider
// may answer once another replica has escalated the question, even while
// this replica's copy does not show the escalation yet; a refusal is
// decided on the question as stored.
func TestStaleCopyDoesNotRefuseAnEscalation(t *testing.T) {
	prefix := randomPrefix()
	a := newStore(t, redisstore.Options{Prefix: prefix})
	b := newStore(t, redisstore.Options{Prefix: prefix})
	ctx := t.Context()
	routes := map[string]core.Route{
		"ops":    {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"ada"}}, EscalateTo: "oncall"},
		"oncall": {Deciders: map[core.Surface][]string{core.SurfaceDiscord: {"boss"}}},
	}
	svc := coretest.Service(t, a, coretest.Options{Routes: routes})

	q := question(0, "run-1", t0)
	q.OnTimeout = core.OnTimeoutEscalate
	mustCreate(t, a, q)
	ch, stop := a.Watch(q.ID)
	defer stop()
	stale := mustGet(t, a, q.ID)
	if err := b.Renotify(ctx, core.Renotice{QuestionID: q.ID, Count: true, Now: t0}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch, "the escalation on the other replica")
	redisstore.KeepFresh(a, stale) // as if that wake-up were still on its way

	boss := core.Decider{Surface: core.SurfaceDiscord, ID: "boss", Name: "Boss"}
	out, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: boss, Text: "go ahead"})
	if err != nil || out.Question.State != core.StateAnswered {
		t.Fatalf("the escalation's decider: %+v, %v; want the answer taken", out, err)
	}
	stranger := core.Decider{Surface: core.SurfaceDiscord, ID: "someone"}
	q2 := question(0, "run-1", t0)
	mustCreate(t, a, q2)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q2.ID, Decider: stranger, Text: "no"}); core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("a stranger: %v, want forbidden", err)
	}
}
