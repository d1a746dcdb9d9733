package redis_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"

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
	for _, id := range []string{ended.ID, badSurface.ID} {
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
		for _, id := range []string{core.NewID(0), "nope", core.NewID(9)} {
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
	if _, err := s.Renotify(ctx, remind(q.Deadline.Add(time.Second), q.Deadline.Add(time.Hour))); core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
		t.Fatalf("stale deadline: %v, want conflict", err)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 0 {
		t.Fatalf("a refused renotice enqueued %+v", ds)
	}
	got, err := s.Renotify(ctx, remind(q.Deadline, q.Deadline.Add(time.Hour)))
	if err != nil || got.Renotified != 1 || !got.Deadline.Equal(q.Deadline.Add(time.Hour)) {
		t.Fatalf("renotify: %+v, %v", got, err)
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
	got, err = s.Renotify(ctx, remind(time.Time{}, time.Time{}))
	if err != nil || got.Renotified != 2 || !got.Deadline.Equal(q.Deadline.Add(time.Hour)) {
		t.Fatalf("unconditional renotify: %+v, %v", got, err)
	}
	if _, err := s.Resolve(ctx, answer(q, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	var closed *core.ClosedError
	if _, err := s.Renotify(ctx, remind(time.Time{}, time.Time{})); !errors.As(err, &closed) || closed.Question.Resolution.Decider.ID != "ada" {
		t.Fatalf("renotify closed: %v, want ClosedError", err)
	}
	if _, err := s.Renotify(ctx, core.Renotice{QuestionID: core.NewID(0)}); !errors.Is(err, core.ErrNotFound) {
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
		if _, err := s.RecordMessage(ctx, q.ID, ref, notified); err != nil {
			t.Fatal(err)
		}
	}
	repeat := slack
	repeat.ID = "9.9"
	got, err := s.RecordMessage(ctx, q.ID, repeat, notified)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]core.MessageRef{slack, tg}, got.Messages); diff != "" {
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
	if _, err := s.RecordMessage(ctx, q.ID, late, notified); err != nil {
		t.Fatal(err)
	}
	if ds := drain(t, s, core.SurfaceDiscord); len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || *ds[0].Message != late {
		t.Fatalf("late card's update: %+v", ds)
	}
	if _, err := s.RecordMessage(ctx, core.NewID(0), slack, notified); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("unknown question: %v", err)
	}
	if _, err := s.RecordMessage(ctx, q.ID, core.MessageRef{Surface: core.SurfaceAPI, Delivery: "x"}, notified); core.ErrorCode(err) != core.CodeInvalid {
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

func sortedIDs(ids ...string) []string {
	out := append([]string(nil), ids...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestListOpenTies pages through questions that all share one created
// millisecond, with pages that split the ties, and checks nothing is
// skipped or repeated and the order is class, time, id.
func TestListOpenTies(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	var hard, soft []string
	for i := range 11 {
		q := question(0, "run-1", t0)
		if i%3 == 0 {
			q.Reversibility = core.HardToReverse
			hard = append(hard, q.ID)
		} else {
			soft = append(soft, q.ID)
		}
		mustCreate(t, s, q)
	}
	older := question(0, "run-1", t0.Add(-time.Millisecond)) // older, soft: first of the soft ones
	mustCreate(t, s, older)
	want := append(sortedIDs(hard...), append([]string{older.ID}, sortedIDs(soft...)...)...)
	for _, size := range []int{1, 2, 3, 5, 100} {
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatal("paging does not end")
			}
			qs, next, err := s.ListOpen(ctx, cursor, size)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range qs {
				got = append(got, q.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("page size %d (-want +got):\n%s", size, diff)
		}
	}
	if _, _, err := s.ListOpen(ctx, "not-a-cursor!", 2); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestBetweenAndDue(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	var qs []*core.Question
	for i := range 5 {
		q := question(0, "run-1", t0.Add(time.Duration(i)*time.Minute))
		mustCreate(t, s, q)
		qs = append(qs, q)
	}
	got, err := s.Between(ctx, core.ByCreated, t0.Add(time.Minute), t0.Add(3*time.Minute), 10)
	if err != nil || len(got) != 2 || got[0].ID != qs[1].ID || got[1].ID != qs[2].ID {
		t.Fatalf("between [1m, 3m): %v, %v", got, err)
	}
	if got, _ := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Hour), 3); len(got) != 3 || got[0].ID != qs[0].ID {
		t.Fatalf("between with limit 3: %v", got)
	}
	if _, err := s.Between(ctx, "nope", t0, t0.Add(time.Hour), 3); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("unknown index: %v", err)
	}
	due, err := s.Due(ctx, qs[2].Deadline, 10)
	if err != nil || len(due) != 3 || due[0] != qs[0].ID || due[2] != qs[2].ID {
		t.Fatalf("due: %v, %v", due, err)
	}
}

// TestUnclassified: a record stored without a reversibility reads as
// unclassified, never guessed.
func TestUnclassified(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	q := question(0, "run-1", t0)
	q.Reversibility = ""
	mustCreate(t, s, q)
	if got := mustGet(t, s, q.ID); got.Reversibility != core.Unclassified {
		t.Fatalf("reversibility %q, want unclassified", got.Reversibility)
	}
}

func TestEventsAndPurge(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	old, kept, open := question(0, "run-1", t0), question(0, "run-1", t0), question(0, "run-1", t0)
	for _, q := range []*core.Question{old, kept, open} {
		mustCreate(t, s, q)
	}
	if _, err := s.Resolve(ctx, answer(old, "ada", t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, answer(kept, "ada", t0.Add(3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	refused, err := s.Append(ctx, core.Event{QuestionID: old.ID, At: t0.Add(time.Hour), Kind: core.EventRefused, Reason: "late"})
	if err != nil {
		t.Fatal(err)
	}
	loose, err := s.Append(ctx, core.Event{QuestionID: "garbage", At: t0, Kind: core.EventRefused, Reason: "no such question"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Events(ctx, 0, 100)
	if err != nil || len(all) != 7 {
		t.Fatalf("events: %d, %v", len(all), err)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d; one shard counts 1, 2, 3...", i, e.Seq)
		}
	}
	if refused.Seq != 6 || loose.Seq != 7 {
		t.Fatalf("appended seqs %d, %d", refused.Seq, loose.Seq)
	}
	page, _ := s.Events(ctx, 3, 2)
	if len(page) != 2 || page[0].Seq != 4 || page[1].Seq != 5 {
		t.Fatalf("events since 3, limit 2: %+v", page)
	}

	n, err := s.Purge(ctx, t0.Add(2*time.Hour), 10)
	if err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if _, err := s.Get(ctx, old.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("purged question: %v", err)
	}
	left, _ := s.Events(ctx, 0, 100)
	var seqs []int64
	for _, e := range left {
		if e.QuestionID == old.ID || e.QuestionID == "garbage" {
			t.Fatalf("purged event remains: %+v", e)
		}
		if e.Kind != core.EventCheckpoint { // the audit chain's record of the purge
			seqs = append(seqs, e.Seq)
		}
	}
	if diff := cmp.Diff([]int64{2, 3, 5}, seqs); diff != "" {
		t.Fatalf("remaining seqs (-want +got):\n%s", diff)
	}
	if got, _ := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Millisecond), 10); len(got) != 2 {
		t.Fatalf("created index after purge: %v", got)
	}
	if n, err := s.Purge(ctx, t0.Add(2*time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("second purge: %d, %v", n, err)
	}
	// New events keep counting up after a purge (and its checkpoint, 8).
	e, err := s.Append(ctx, core.Event{QuestionID: kept.ID, At: t0, Kind: core.EventRefused})
	if err != nil || e.Seq != 9 {
		t.Fatalf("append after purge: %+v, %v", e, err)
	}
}

func TestBeat(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	if prev, err := s.Beat(ctx, t0); err != nil || !prev.IsZero() {
		t.Fatalf("first beat: %v, %v", prev, err)
	}
	if prev, err := s.Beat(ctx, t0.Add(time.Minute)); err != nil || !prev.Equal(t0) {
		t.Fatalf("second beat: %v, %v", prev, err)
	}
}

// TestNoLimit: a limit <= 0 means no limit, for every listing and for
// Purge, across shards.
func TestNoLimit(t *testing.T) {
	s := newStore(t, redisstore.Options{Shards: 3})
	ctx := t.Context()
	const n = 700 // more than one purge batch
	pipe := make(chan *core.Question, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range pipe {
				mustCreate(t, s, q)
			}
		}()
	}
	qs := make([]*core.Question, n)
	for i := range qs {
		qs[i] = question(i%3, "run-1", t0.Add(time.Duration(i)*time.Millisecond))
		pipe <- qs[i]
	}
	close(pipe)
	wg.Wait()
	for _, limit := range []int{0, -1} {
		open, next, err := s.ListOpen(ctx, "", limit)
		if err != nil || len(open) != n || next != "" {
			t.Fatalf("list open, limit %d: %d, %q, %v", limit, len(open), next, err)
		}
		between, err := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Hour), limit)
		if err != nil || len(between) != n || between[0].ID != qs[0].ID || between[n-1].ID != qs[n-1].ID {
			t.Fatalf("between, limit %d: %d, %v", limit, len(between), err)
		}
		due, err := s.Due(ctx, t0.Add(2*time.Hour), limit)
		if err != nil || len(due) != n {
			t.Fatalf("due, limit %d: %d, %v", limit, len(due), err)
		}
		evs, err := s.Events(ctx, 0, limit)
		if err != nil || len(evs) != n {
			t.Fatalf("events, limit %d: %d, %v", limit, len(evs), err)
		}
	}
	var rw sync.WaitGroup
	for w := range 8 {
		rw.Add(1)
		go func() {
			defer rw.Done()
			for i := w; i < n; i += 8 {
				if _, err := s.Resolve(ctx, answer(qs[i], "ada", t0)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	rw.Wait()
	if got, err := s.Purge(ctx, t0.Add(time.Millisecond), 0); err != nil || got != n {
		t.Fatalf("purge without limit: %d, %v; want %d", got, err, n)
	}
	if evs, err := s.Events(ctx, 0, 0); err != nil || len(withoutCheckpoints(evs)) != 0 {
		t.Fatalf("events after purge: %d, %v", len(evs), err)
	}
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
		return core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: n, Delivery: q.ID + ":post:" + n, At: t0}
	}
	record := func(q *core.Question, ref core.MessageRef) *core.Question {
		got, err := s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, t0))
		if err != nil {
			t.Fatal(err)
		}
		return got
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

// TestDueSkipsClosed: a close leaves its question in the deadline index;
// Due drops such entries and still fills its page with open questions.
func TestDueSkipsClosed(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, redisstore.Options{})
	var open []string
	for i := range 6 {
		q := question(0, "run-1", t0.Add(time.Duration(i)*time.Second))
		q.Deadline = t0.Add(time.Hour + time.Duration(i)*time.Second)
		mustCreate(t, s, q)
		if i < 4 { // the earliest deadlines close
			if _, err := s.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute))); err != nil {
				t.Fatal(err)
			}
			continue
		}
		open = append(open, q.ID)
	}
	due, err := s.Due(ctx, t0.Add(2*time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(open, due); diff != "" {
		t.Fatalf("due (-want +got):\n%s", diff)
	}
	ids, err := s.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run-1"}.Key(), t0.Add(2*time.Hour))
	slices.Sort(ids)
	slices.Sort(open)
	if err != nil || !cmp.Equal(open, ids) {
		t.Fatalf("end run listed %v, %v; want the open ones %v", ids, err, open)
	}
}

// TestEarlierLayoutStillReads: questions written by earlier versions
// read, take cards, close (editing their cards) and are purged with their
// events like new ones. The oldest layout stores every counter, a
// "created" field and its event ids in a list of their own; the next
// keeps its event ids in the hash and no zero counters. Both keep the
// document in the hash, their cards as update-delivery fragments found
// by md:<key> fields and their events as JSON, and were put in the
// created index at create.
func TestEarlierLayoutStillReads(t *testing.T) {
	for _, oldest := range []bool{true, false} {
		t.Run(fmt.Sprintf("oldest=%v", oldest), func(t *testing.T) { testEarlierLayout(t, oldest) })
	}
}

func testEarlierLayout(t *testing.T, oldest bool) {
	ctx := t.Context()
	c := newClient(t)
	s := newStoreOn(t, c, redisstore.Options{})
	q := question(0, "run-1", t0)
	q.Deadline = t0.Add(time.Hour)
	qk, listK, evK, seqK, openK, createdK, deadlineK, runK := redisstore.Keys(s, q.ID)
	doc, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	run := q.Run().Key()
	asked, _ := json.Marshal(event(q, core.EventAsked, t0))
	om := redisstore.OpenMember(q)
	ms := func(at time.Time) string { return strconv.FormatInt(at.UnixMilli(), 10) }
	card := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.1", Delivery: q.ID + ":post:slack:C1", Kind: core.DeliverPost, At: t0}
	frag, _ := json.Marshal(struct {
		Kind       core.DeliveryKind `json:"kind"`
		Surface    core.Surface      `json:"surface"`
		Room       string            `json:"room"`
		QuestionID string            `json:"question_id"`
		Message    core.MessageRef   `json:"message"`
	}{core.DeliverUpdate, card.Surface, card.Room, q.ID, card})
	fields := []any{"doc", doc, "state", "open", "run", run, "om", om, "deadline", ms(q.Deadline),
		"nm", 1, "m:1", string(frag[1 : len(frag)-1]), "ms:1", "slack", "md:" + card.Delivery, 1}
	if oldest {
		fields = append(fields, "created", ms(t0), "renot", 0, "ni", 0, "na", 0, "ver", 0)
	} else {
		fields = append(fields, "ev", "1-0")
	}
	_, err = c.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, qk, fields...)
		p.Set(ctx, seqK, 1, 0)
		p.XAdd(ctx, &goredis.XAddArgs{Stream: evK, ID: "1-0", Values: []any{"e", string(asked)}})
		if oldest {
			p.RPush(ctx, listK, "1-0")
		}
		p.ZAdd(ctx, openK, goredis.Z{Member: om})
		p.ZAdd(ctx, createdK, goredis.Z{Score: float64(t0.UnixMilli()), Member: q.ID})
		p.ZAdd(ctx, deadlineK, goredis.Z{Score: float64(q.Deadline.UnixMilli()), Member: q.ID})
		p.ZAdd(ctx, runK, goredis.Z{Member: run + "\x00" + q.ID})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := *q
	want.Messages = []core.MessageRef{card}
	if diff := cmp.Diff(&want, mustGet(t, s, q.ID)); diff != "" {
		t.Fatalf("earlier record read back (-want +got):\n%s", diff)
	}
	// The card is recognised by its key; a second card is recorded.
	notified := event(q, core.EventNotified, t0)
	if got, err := s.RecordMessage(ctx, q.ID, card, notified); err != nil || len(got.Messages) != 1 {
		t.Fatalf("repeat of the earlier card: %+v, %v", got, err)
	}
	card2 := core.MessageRef{Surface: core.SurfaceTelegram, Room: "-100", ID: "42", Delivery: q.ID + ":post:telegram:-100", Kind: core.DeliverPost, At: t0}
	if got, err := s.RecordMessage(ctx, q.ID, card2, notified); err != nil || len(got.Messages) != 2 {
		t.Fatalf("a new card on the earlier record: %+v, %v", got, err)
	}
	want.Messages = append(want.Messages, card2)
	// Listed by created time, open and closed.
	between := func() {
		t.Helper()
		got, err := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Millisecond), 10)
		if err != nil || len(got) != 1 || got[0].ID != q.ID {
			t.Fatalf("between: %+v, %v", got, err)
		}
	}
	between()
	at := t0.Add(time.Minute)
	tr := answer(q, "ada", at)
	tr.Read = mustGet(t, s, q.ID)
	got, err := s.Resolve(ctx, tr)
	if err != nil || got.State != core.StateAnswered {
		t.Fatalf("close: %+v, %v", got, err)
	}
	if got := mustGet(t, s, q.ID); got.Resolution == nil || got.Resolution.Answer != tr.Resolution.Answer || len(got.Messages) != 2 {
		t.Fatalf("earlier record read back closed: %+v", got)
	}
	between()
	for _, m := range want.Messages {
		ds := drain(t, s, m.Surface)
		if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].Message == nil || *ds[0].Message != m || ds[0].QuestionID != q.ID {
			t.Fatalf("%s card's edit: %+v", m.Surface, ds)
		}
	}
	if diff := cmp.Diff([]core.EventKind{core.EventAsked, core.EventNotified, core.EventAnswered}, kinds(t, s, q.ID)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if n, err := s.Purge(ctx, at.Add(time.Hour), 0); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	if evs, _ := s.Events(ctx, 0, 100); len(withoutCheckpoints(evs)) != 0 {
		t.Fatalf("events left after purge: %+v", evs)
	}
	for _, k := range []string{qk, listK} {
		if n, _ := c.Exists(ctx, k).Result(); n != 0 {
			t.Fatalf("%s left after purge", k)
		}
	}
	for _, k := range []string{deadlineK, runK, openK, createdK} {
		if n, _ := c.ZCard(ctx, k).Result(); n != 0 {
			t.Fatalf("%s still has %d members after purge", k, n)
		}
	}
}
