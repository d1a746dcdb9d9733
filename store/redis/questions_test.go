package redis_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

func TestCreateAndGetRoundTrip(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	q := formQuestion(0, "run-1", t0.Add(123*time.Millisecond))
	q.Labels = core.Labels{Project: "p", Task: "t"}
	q.Context = `quotes " and \ and <html> & ünïcode`
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	got := mustGet(t, s, q.ID)
	if diff := cmp.Diff(q, got); diff != "" {
		t.Fatalf("stored question differs (-want +got):\n%s", diff)
	}
	if !got.CreatedAt.Equal(q.CreatedAt) || !got.Deadline.Equal(q.Deadline) {
		t.Fatalf("times changed: %v %v", got.CreatedAt, got.Deadline)
	}
	ds := drain(t, s, core.SurfaceSlack)
	want := post(q, core.SurfaceSlack, "C1")
	if len(ds) != 1 || ds[0].Attempts != 1 || ds[0].ID == "" {
		t.Fatalf("deliveries %+v", ds)
	}
	ds[0].ID, ds[0].Attempts = "", 0
	if diff := cmp.Diff(want, ds[0]); diff != "" {
		t.Fatalf("delivery (-want +got):\n%s", diff)
	}
}

// TestCreateCodes covers create.lua's return codes.
func TestCreateCodes(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)

	dup := question(0, "run-2", t0)
	dup.ID = q.ID
	ended := question(0, "run-ended", t0)
	if _, err := s.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run-ended"}.Key(), t0); err != nil {
		t.Fatal(err)
	}
	badSurface := question(0, "run-1", t0)
	otherShard := question(5, "run-1", t0) // this store has one shard

	for _, c := range []struct {
		name string
		q    *core.Question
		out  []core.Delivery
		code core.Code
	}{
		{"existing id", dup, nil, core.CodeConflict},
		{"ended run", ended, nil, core.CodeConflict},
		{"delivery to a surface without cards", badSurface, []core.Delivery{post(badSurface, core.SurfaceAPI, "x")}, core.CodeInvalid},
		{"id of a shard the store lacks", otherShard, nil, core.CodeInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.Create(ctx, c.q, event(c.q, core.EventAsked, t0), c.out)
			if core.ErrorCode(err) != c.code {
				t.Fatalf("err %v, want code %s", err, c.code)
			}
		})
	}
	// Nothing of the refused creates was stored.
	if got := mustGet(t, s, q.ID); got.RunID != "run-1" {
		t.Fatalf("a refused create overwrote the question: %+v", got)
	}
	for _, id := range []core.QuestionID{ended.ID, badSurface.ID} {
		if _, err := s.Get(ctx, id); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("refused question %s: %v", id, err)
		}
	}
	evs, err := s.Events(ctx, 0, 100)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after refused creates: %+v, %v", evs, err)
	}
}

// TestResolveCodes covers resolve.lua's return codes and what each leaves
// behind.
func TestResolveCodes(t *testing.T) {
	ctx := t.Context()
	at := t0.Add(time.Minute)

	t.Run("unknown and malformed ids", func(t *testing.T) {
		s := newStore(t, redisstore.Options{})
		for _, id := range []core.QuestionID{core.NewID(0), "nope", core.NewID(9)} {
			if _, err := s.Resolve(ctx, core.Transition{QuestionID: id, Now: at}); !errors.Is(err, core.ErrNotFound) {
				t.Fatalf("resolve %q: %v, want not found", id, err)
			}
			if _, err := s.Get(ctx, id); !errors.Is(err, core.ErrNotFound) {
				t.Fatalf("get %q: %v, want not found", id, err)
			}
		}
	})

	t.Run("close, then closed", func(t *testing.T) {
		s := newStore(t, redisstore.Options{})
		q := question(0, "run-1", t0)
		mustCreate(t, s, q)
		got, err := s.Resolve(ctx, answer(q, "ada", at))
		if err != nil {
			t.Fatal(err)
		}
		want := *q
		want.State = core.StateAnswered
		want.Resolution = &core.Resolution{State: core.StateAnswered, Decider: decider("ada"), At: at, Answer: "from ada"}
		want.Version = 1
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Fatalf("after close (-want +got):\n%s", diff)
		}
		_, err = s.Resolve(ctx, answer(q, "bob", at.Add(time.Second)))
		var closed *core.ClosedError
		if !errors.As(err, &closed) || core.ErrorCode(err) != core.CodeConflict {
			t.Fatalf("second close: %v, want ClosedError", err)
		}
		if diff := cmp.Diff(&want, closed.Question); diff != "" {
			t.Fatalf("loser's question (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]core.EventKind{core.EventAsked, core.EventAnswered}, kinds(t, s, q.ID)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
		// Closed: out of the open, deadline and run indexes, in the closed one.
		if open, _, _ := s.ListOpen(ctx, "", 10); len(open) != 0 {
			t.Fatalf("still listed open: %v", open)
		}
		if due, _ := s.Due(ctx, t0.Add(24*time.Hour), 10); len(due) != 0 {
			t.Fatalf("still due: %v", due)
		}
		if ids, _ := s.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run-1"}.Key(), at); len(ids) != 0 {
			t.Fatalf("still open in its run: %v", ids)
		}
		closedQs, err := s.Between(ctx, core.ByClosed, at, at.Add(time.Millisecond), 10)
		if err != nil || len(closedQs) != 1 || closedQs[0].ID != q.ID {
			t.Fatalf("closed index: %v, %v", closedQs, err)
		}
	})

	t.Run("form items", func(t *testing.T) {
		s := newStore(t, redisstore.Options{})
		q := formQuestion(0, "run-1", t0)
		mustCreate(t, s, q)
		item := func(id, opt, who string) core.ItemAnswer {
			return core.ItemAnswer{ItemID: id, OptionID: opt, Decider: decider(who), At: at}
		}
		step := func(items ...core.ItemAnswer) core.Transition {
			tr := answer(q, "ada", at)
			tr.Items = items
			tr.ItemEvent = event(q, core.EventItemAnswered, at)
			return tr
		}
		// The second item first: answers still come back in item order.
		got, err := s.Resolve(ctx, step(item("notes", "long", "ada")))
		if err != nil || got.State != core.StateOpen || got.Resolution != nil {
			t.Fatalf("first item: %+v, %v", got, err)
		}
		// The same item again, even beside a new one: refused whole.
		if _, err := s.Resolve(ctx, step(item("day", "mon", "bob"), item("notes", "short", "bob"))); core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
			t.Fatalf("re-answering an item: %v, want conflict", err)
		}
		// An item given twice in one transition: refused whole.
		if _, err := s.Resolve(ctx, step(item("day", "mon", "bob"), item("day", "fri", "bob"))); core.ErrorCode(err) != core.CodeConflict {
			t.Fatalf("an item twice: %v, want conflict", err)
		}
		if got := mustGet(t, s, q.ID); len(got.Answers) != 1 || got.Answers[0].OptionID != "long" {
			t.Fatalf("a refused transition changed the answers: %+v", got.Answers)
		}
		got, err = s.Resolve(ctx, step(item("day", "fri", "bob")))
		if err != nil {
			t.Fatal(err)
		}
		want := []core.ItemAnswer{item("day", "fri", "bob"), item("notes", "long", "ada")}
		if diff := cmp.Diff(want, got.Answers); diff != "" {
			t.Fatalf("answers (-want +got):\n%s", diff)
		}
		if got.State != core.StateAnswered || got.Resolution.Decider.ID != "ada" {
			t.Fatalf("complete form: state %s resolution %+v", got.State, got.Resolution)
		}
		wantKinds := []core.EventKind{core.EventAsked, core.EventItemAnswered, core.EventAnswered}
		if diff := cmp.Diff(wantKinds, kinds(t, s, q.ID)); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	})

	t.Run("a form closes without items when cancelled", func(t *testing.T) {
		s := newStore(t, redisstore.Options{})
		q := formQuestion(0, "run-1", t0)
		mustCreate(t, s, q)
		tr := answer(q, "agent-a", at)
		tr.Resolution.State = core.StateCancelled
		tr.Event.Kind = core.EventCancelled
		got, err := s.Resolve(ctx, tr)
		if err != nil || got.State != core.StateCancelled {
			t.Fatalf("cancel form: %+v, %v", got, err)
		}
	})

	t.Run("a resolution must close", func(t *testing.T) {
		s := newStore(t, redisstore.Options{})
		q := question(0, "run-1", t0)
		mustCreate(t, s, q)
		tr := answer(q, "ada", at)
		tr.Resolution.State = core.StateOpen
		if _, err := s.Resolve(ctx, tr); core.ErrorCode(err) != core.CodeInvalid {
			t.Fatalf("open resolution: %v, want invalid", err)
		}
	})
}

// TestResolveRace is law 2 at the store: a hundred resolvers, one
// winner, and every loser holds a ClosedError naming the winner.
func TestResolveRace(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	const n = 100
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		losers  []*core.ClosedError
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			who := fmt.Sprintf("op-%d", i)
			got, err := s.Resolve(t.Context(), answer(q, who, t0.Add(time.Minute)))
			mu.Lock()
			defer mu.Unlock()
			var closed *core.ClosedError
			switch {
			case err == nil && got.State == core.StateAnswered:
				winners = append(winners, who)
			case errors.As(err, &closed):
				losers = append(losers, closed)
			default:
				t.Errorf("resolver %s: %+v, %v", who, got, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 || len(losers) != n-1 {
		t.Fatalf("%d winners and %d losers, want 1 and %d", len(winners), len(losers), n-1)
	}
	for _, l := range losers {
		if l.Question.Resolution == nil || l.Question.Resolution.Decider.ID != winners[0] || l.Question.Resolution.Answer != "from "+winners[0] {
			t.Fatalf("a loser was told %+v, want the win of %s", l.Question.Resolution, winners[0])
		}
	}
	if got := kinds(t, s, q.ID); len(got) != 2 {
		t.Fatalf("events %v, want asked and one answered", got)
	}
}

// TestRenotifyCodes covers renotify.lua's return codes.
func TestRenotifyCodes(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	remind := func(ifDeadline, deadline time.Time) core.Renotice {
		return core.Renotice{QuestionID: q.ID, IfDeadline: ifDeadline, Deadline: deadline, Count: true,
			Event:      event(q, core.EventEscalated, t0),
			Deliveries: []core.Delivery{{Key: "esc", Kind: core.DeliverEscalate, Surface: core.SurfaceDiscord, Room: "D9", QuestionID: q.ID, CreatedAt: t0}},
			Now:        t0}
	}
	if err := s.Renotify(ctx, remind(q.Deadline.Add(time.Second), q.Deadline.Add(time.Hour))); core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
		t.Fatalf("stale deadline: %v, want conflict", err)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 0 {
		t.Fatalf("a refused renotice enqueued %+v", ds)
	}
	if err := s.Renotify(ctx, remind(q.Deadline, q.Deadline.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, q.ID); got.Renotified != 1 || !got.Deadline.Equal(q.Deadline.Add(time.Hour)) {
		t.Fatalf("after renotify: %+v", got)
	}
	if due, _ := s.Due(ctx, q.Deadline, 10); len(due) != 0 {
		t.Fatalf("due at the old deadline: %v", due)
	}
	if due, _ := s.Due(ctx, q.Deadline.Add(time.Hour), 10); len(due) != 1 {
		t.Fatalf("not due at the new deadline: %v", due)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 1 || ds[0].Key != "esc" {
		t.Fatalf("escalation deliveries %+v", ds)
	}
	// Unconditional, keeping the deadline.
	if err := s.Renotify(ctx, remind(time.Time{}, time.Time{})); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, q.ID); got.Renotified != 2 || !got.Deadline.Equal(q.Deadline.Add(time.Hour)) {
		t.Fatalf("after an unconditional renotify: %+v", got)
	}
	if _, err := s.Resolve(ctx, answer(q, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	var closed *core.ClosedError
	if err := s.Renotify(ctx, remind(time.Time{}, time.Time{})); !errors.As(err, &closed) || closed.Question.Resolution.Decider.ID != "ada" {
		t.Fatalf("renotify closed: %v, want ClosedError", err)
	}
	if err := s.Renotify(ctx, core.Renotice{QuestionID: core.NewID(0)}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("renotify unknown: %v", err)
	}
}

// TestRecordMessage covers record_message.lua: idempotent on the delivery
// key, cards in posting order, and a card recorded after the close gets
// its edit at once.
func TestRecordMessage(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	notified := event(q, core.EventNotified, t0)
	slack := core.MessageRef{Surface: core.SurfaceSlack, Room: `C"1`, ID: "1.1", Delivery: "k-slack", At: t0}
	tg := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-100", ID: "42", Delivery: "k-tg", At: t0.Add(time.Second)}
	for _, ref := range []core.MessageRef{slack, tg} {
		if err := s.RecordMessage(ctx, q.ID, ref, notified); err != nil {
			t.Fatal(err)
		}
	}
	repeat := slack
	repeat.ID = "9.9"
	if err := s.RecordMessage(ctx, q.ID, repeat, notified); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]core.MessageRef{slack, tg}, mustGet(t, s, q.ID).Messages); diff != "" {
		t.Fatalf("cards (-want +got):\n%s", diff)
	}
	if got := kinds(t, s, q.ID); len(got) != 3 {
		t.Fatalf("events %v: a repeat appended", got)
	}
	if _, err := s.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []core.MessageRef{slack, tg} {
		ds := drain(t, s, ref.Surface)
		if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil || *ds[0].Message != ref ||
			ds[0].Room != ref.Room || ds[0].QuestionID != q.ID || !ds[0].CreatedAt.Equal(t0.Add(time.Minute)) || ds[0].Key == "" {
			t.Fatalf("%s updates: %+v", ref.Surface, ds)
		}
	}
	late := core.MessageRef{Surface: core.SurfaceDiscord, Room: "D9", ID: "7", Delivery: "k-discord", At: t0.Add(2 * time.Minute)}
	if err := s.RecordMessage(ctx, q.ID, late, notified); err != nil {
		t.Fatal(err)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || *ds[0].Message != late {
		t.Fatalf("late card's update: %+v", ds)
	}
	if err := s.RecordMessage(ctx, core.NewID(0), slack, notified); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown question: %v", err)
	}
	if err := s.RecordMessage(ctx, q.ID, core.MessageRef{Surface: core.SurfaceAPI, Delivery: "x"}, notified); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("card on the API: %v", err)
	}
}

func TestEndRun(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	a, b := question(0, "run", t0), question(0, "run", t0)
	prefixed := question(0, "run\x00x", t0) // a run id that extends the other's
	other := question(0, "run-2", t0)
	for _, q := range []*core.Question{a, b, prefixed, other} {
		mustCreate(t, s, q)
	}
	ids, err := s.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run"}.Key(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedIDs(a.ID, b.ID), sortedIDs(ids...)); diff != "" {
		t.Fatalf("open ids of the run (-want +got):\n%s", diff)
	}
	// Twice: same answer, still refused.
	if again, err := s.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run"}.Key(), t0.Add(time.Hour)); err != nil || len(again) != 2 {
		t.Fatalf("second end: %v, %v", again, err)
	}
	if err := s.Create(ctx, question(0, "run", t0), core.Event{Kind: core.EventAsked}, nil); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("ask into the ended run: %v", err)
	}
}

func sortedIDs(ids ...core.QuestionID) []core.QuestionID {
	out := append([]core.QuestionID(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestResolveFromRead: handed the question as the caller read it, Resolve
// answers with exactly what a read after it returns, whether the stored
// question is still that copy (the script then sends back only the state)
// or has changed since (a card recorded meanwhile; the script then sends
// the whole hash).
func TestResolveFromRead(t *testing.T) {
	ctx := t.Context()
	at := t0.Add(time.Minute)
	s := newStore(t, redisstore.Options{})
	card := func(q *core.Question, n string) core.MessageRef {
		return core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: n, Delivery: string(q.ID) + ":post:" + n, At: t0}
	}
	record := func(q *core.Question, ref core.MessageRef) *core.Question {
		if err := s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, t0)); err != nil {
			t.Fatal(err)
		}
		return mustGet(t, s, q.ID)
	}
	check := func(name string, got *core.Question, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(mustGet(t, s, got.ID), got); diff != "" {
			t.Fatalf("%s: Resolve's question differs from a read after it (-read +resolve):\n%s", name, diff)
		}
	}

	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	read := record(q, card(q, "1"))
	tr := answer(q, "ada", at)
	tr.Read = read
	got, err := s.Resolve(ctx, tr)
	check("as read", got, err)
	if got.State != core.StateAnswered || len(got.Messages) != 1 {
		t.Fatalf("as read: %+v", got)
	}

	stale := question(0, "run-1", t0)
	mustCreate(t, s, stale)
	read = record(stale, card(stale, "1"))
	record(stale, card(stale, "2")) // after the caller's read
	tr = answer(stale, "ada", at)
	tr.Read = read
	got, err = s.Resolve(ctx, tr)
	check("changed since the read", got, err)
	if len(got.Messages) != 2 {
		t.Fatalf("changed since the read: %d cards, want 2", len(got.Messages))
	}
	ds, err := s.Claim(ctx, core.SurfaceSlack, "c", 100, time.Hour, 0)
	if err != nil || len(ds) != 3 {
		t.Fatalf("claimed %d card updates, %v; want one per card of both questions (3)", len(ds), err)
	}

	form := formQuestion(0, "run-1", t0)
	mustCreate(t, s, form)
	read = record(form, card(form, "1"))
	for i, it := range form.Items {
		tr := answer(form, "ada", at)
		tr.Items = []core.ItemAnswer{{ItemID: it.ID, OptionID: it.Options[0].ID,
			Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada", Roles: []string{"lead"}}, At: at}}
		tr.ItemEvent = event(form, core.EventItemAnswered, at)
		tr.Read = read
		got, err := s.Resolve(ctx, tr)
		check("form item "+it.ID, got, err)
		if closed := got.State.Closed(); closed != (i == len(form.Items)-1) {
			t.Fatalf("after item %d of %d: state %s", i+1, len(form.Items), got.State)
		}
		read = got
	}
}
