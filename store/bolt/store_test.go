package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) core.Store {
			return openAt(t, filepath.Join(t.TempDir(), "askbridge.db"), bolt.Options{AuditKey: audit.Key(storetest.AuditKey)})
		},
		Reopen: func(t *testing.T, s core.Store) core.Store {
			bs := s.(*bolt.Store)
			path := bs.Path()
			if err := bs.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			return openAt(t, path, bolt.Options{AuditKey: audit.Key(storetest.AuditKey)})
		},
		Clocked: func(t *testing.T, now func() time.Time) core.Store {
			return openAt(t, filepath.Join(t.TempDir(), "askbridge.db"), bolt.Options{Now: now, AuditKey: audit.Key(storetest.AuditKey)})
		},
	})
}

// openAt opens a store that the test closes when it ends.
func openAt(t testing.TB, path string, opts bolt.Options) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func openTemp(t testing.TB, opts bolt.Options) (*bolt.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "askbridge.db")
	return openAt(t, path, opts), path
}

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// question returns an open clarification created at t0+offset.
func question(offset time.Duration, rev core.Reversibility) *core.Question {
	at := t0.Add(offset)
	return &core.Question{
		ID:            core.NewID(0),
		Kind:          core.KindClarification,
		Agent:         "agent-1",
		RunID:         "run-1",
		Text:          "Which database?",
		Reversibility: rev,
		Route:         "default",
		CreatedAt:     at,
		Deadline:      at.Add(time.Hour),
		Timeout:       core.Duration(time.Hour),
		OnTimeout:     core.OnTimeoutDeny,
		State:         core.StateOpen,
	}
}

func asked(q *core.Question) core.Event {
	return core.Event{QuestionID: q.ID, RunID: q.RunID, At: q.CreatedAt, Kind: core.EventAsked}
}

func post(q *core.Question, s core.Surface, room string) core.Delivery {
	return core.Delivery{Key: q.ID + "/post/" + string(s) + "/" + room, Kind: core.DeliverPost, Surface: s, Room: room, QuestionID: q.ID, CreatedAt: q.CreatedAt}
}

func mustCreate(t testing.TB, s core.Store, q *core.Question, out ...core.Delivery) {
	t.Helper()
	if err := s.Create(context.Background(), q, asked(q), out); err != nil {
		t.Fatalf("create %s: %v", q.ID, err)
	}
}

func answer(q *core.Question, who string, at time.Time) core.Transition {
	d := core.Decider{Surface: core.SurfaceSlack, ID: "U" + who, Name: who}
	return core.Transition{
		QuestionID: q.ID,
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: d, At: at, Answer: "postgres, says " + who},
		Event:      core.Event{QuestionID: q.ID, RunID: q.RunID, At: at, Kind: core.EventAnswered, Actor: who, Surface: core.SurfaceSlack},
		Now:        at,
	}
}

func claimAll(t testing.TB, s core.Store, surface core.Surface, consumer string, minIdle time.Duration) []core.Delivery {
	t.Helper()
	got, err := s.Claim(context.Background(), surface, consumer, 100, minIdle, 0)
	if err != nil {
		t.Fatalf("claim %s: %v", surface, err)
	}
	return got
}

func TestResolveRaceExactlyOneWins(t *testing.T) {
	s, _ := openTemp(t, bolt.Options{})
	ctx := context.Background()
	q := question(0, core.HardToReverse)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.01", Delivery: q.ID + "/post/slack/C1", At: t0}
	if _, err := s.RecordMessage(ctx, q.ID, ref, core.Event{Kind: core.EventNotified, At: t0}); err != nil {
		t.Fatal(err)
	}

	const racers = 100
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results = make([]*core.Question, racers)
		errs    = make([]error, racers)
	)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = s.Resolve(ctx, answer(q, fmt.Sprintf("racer%03d", i), t0.Add(time.Minute)))
		}()
	}
	close(start)
	wg.Wait()

	var winner *core.Question
	for i, err := range errs {
		if err == nil {
			if winner != nil {
				t.Fatalf("two winners: %s and %s", winner.Resolution.Decider.Name, results[i].Resolution.Decider.Name)
			}
			winner = results[i]
		}
	}
	if winner == nil {
		t.Fatal("nobody won")
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		var ce *core.ClosedError
		if !errors.As(err, &ce) {
			t.Fatalf("racer %d: got %v, want *core.ClosedError", i, err)
		}
		if core.ErrorCode(err) != core.CodeConflict {
			t.Errorf("racer %d: code %q, want conflict", i, core.ErrorCode(err))
		}
		if diff := cmp.Diff(winner.Resolution, ce.Question.Resolution); diff != "" {
			t.Fatalf("racer %d was told another outcome (-winner +told):\n%s", i, diff)
		}
	}

	evs, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, e := range evs {
		if e.Kind == core.EventAnswered {
			answered++
			if e.Actor != winner.Resolution.Decider.Name {
				t.Errorf("answered event by %q, winner %q", e.Actor, winner.Resolution.Decider.Name)
			}
		}
	}
	if answered != 1 {
		t.Errorf("%d answered events, want 1", answered)
	}
	var updates []core.Delivery
	for _, d := range claimAll(t, s, core.SurfaceSlack, "c1", time.Hour) {
		if d.Kind == core.DeliverUpdate {
			updates = append(updates, d)
		}
	}
	if len(updates) != 1 || updates[0].Message == nil || updates[0].Message.ID != ref.ID {
		t.Errorf("update deliveries %+v, want one for card %s", updates, ref.ID)
	}
	open, _, err := s.ListOpen(ctx, "", 0)
	if err != nil || len(open) != 0 {
		t.Errorf("ListOpen after close = %d questions, %v; want none", len(open), err)
	}
}

func TestReopenKeepsQuestionAndUndeliveredDeliveries(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t, bolt.Options{})
	q := question(0, "") // no reversibility: reads back as unclassified
	q.Labels = core.Labels{Project: "p", Task: "t"}
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"), post(q, core.SurfaceSlack, "C2"), post(q, core.SurfaceTelegram, "42"))

	first, err := s.Claim(ctx, core.SurfaceSlack, "c1", 1, time.Hour, 0)
	if err != nil || len(first) != 1 {
		t.Fatalf("claim = %v, %v", first, err)
	}
	if err := s.Ack(ctx, core.SurfaceSlack, first[0].ID); err != nil {
		t.Fatal(err)
	}
	inflight, err := s.Claim(ctx, core.SurfaceSlack, "c1", 1, time.Hour, 0)
	if err != nil || len(inflight) != 1 {
		t.Fatalf("claim = %v, %v", inflight, err)
	}
	before, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path, bolt.Options{})
	got, err := s.Get(ctx, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *q
	want.Reversibility = core.Unclassified
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("question after reopen (-want +got):\n%s", diff)
	}
	if got.CreatedAt.Location() != time.UTC && !got.CreatedAt.Equal(q.CreatedAt) {
		t.Errorf("created at %v, want %v", got.CreatedAt, q.CreatedAt)
	}

	// The in-flight delivery comes back only once its lease is idle; the
	// telegram one was never claimed.
	if d := claimAll(t, s, core.SurfaceSlack, "c2", time.Hour); len(d) != 0 {
		t.Errorf("slack deliveries with live lease = %+v, want none", d)
	}
	re := claimAll(t, s, core.SurfaceSlack, "c2", 0)
	if len(re) != 1 || re[0].Room != "C2" || re[0].Attempts != 2 || re[0].ID != inflight[0].ID {
		t.Errorf("reclaimed %+v, want C2 on attempt 2", re)
	}
	tg := claimAll(t, s, core.SurfaceTelegram, "c2", time.Hour)
	if len(tg) != 1 || tg[0].Room != "42" || tg[0].Attempts != 1 {
		t.Errorf("telegram %+v, want one first attempt", tg)
	}

	after, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("events after reopen (-before +after):\n%s", diff)
	}
	e, err := s.Append(ctx, core.Event{QuestionID: q.ID, Kind: core.EventRefused, At: t0, Reason: "late"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq <= after[len(after)-1].Seq {
		t.Errorf("seq %d after reopen does not follow %d", e.Seq, after[len(after)-1].Seq)
	}
}

func TestOutboxReclaimAfterConsumerDied(t *testing.T) {
	ctx := context.Background()
	clock := core.NewSimClock(t0)
	s, _ := openTemp(t, bolt.Options{Now: clock.Now})
	q := question(0, core.Reversible)
	mustCreate(t, s, q, post(q, core.SurfaceDiscord, "chan-1"))

	a := claimAll(t, s, core.SurfaceDiscord, "replica-a", time.Minute)
	if len(a) != 1 || a[0].Attempts != 1 {
		t.Fatalf("replica-a claimed %+v", a)
	}
	// replica-a dies without acking. Within minIdle the lease holds.
	clock.Advance(59 * time.Second)
	if b := claimAll(t, s, core.SurfaceDiscord, "replica-b", time.Minute); len(b) != 0 {
		t.Fatalf("replica-b took a live lease: %+v", b)
	}
	clock.Advance(time.Second)
	b := claimAll(t, s, core.SurfaceDiscord, "replica-b", time.Minute)
	want := a[0]
	want.Attempts = 2
	if diff := cmp.Diff([]core.Delivery{want}, b); diff != "" {
		t.Fatalf("replica-b reclaim (-want +got):\n%s", diff)
	}
	// The lease moved: it is replica-b's for another minIdle.
	clock.Advance(30 * time.Second)
	if c := claimAll(t, s, core.SurfaceDiscord, "replica-c", time.Minute); len(c) != 0 {
		t.Fatalf("replica-c took replica-b's fresh lease: %+v", c)
	}
	if err := s.Ack(ctx, core.SurfaceDiscord, b[0].ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if c := claimAll(t, s, core.SurfaceDiscord, "replica-c", 0); len(c) != 0 {
		t.Fatalf("acked delivery handed out again: %+v", c)
	}
	if err := s.Ack(ctx, core.SurfaceDiscord, b[0].ID); err != nil {
		t.Errorf("second ack: %v", err)
	}
}

func TestWatchWakesOnChange(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	q := question(0, core.Reversible)
	mustCreate(t, s, q)

	ch, stop := s.Watch(q.ID)
	other, stopOther := s.Watch(core.NewID(0))
	defer stopOther()

	// The wake-up is sent before Resolve returns, so it is already there.
	if _, err := s.Resolve(ctx, answer(q, "ann", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("watcher not woken by Resolve")
	}
	select {
	case <-other:
		t.Fatal("watcher of another question woken")
	default:
	}

	// A refused Resolve changes nothing and wakes nobody.
	if _, err := s.Resolve(ctx, answer(q, "bob", t0.Add(2*time.Minute))); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("second resolve: %v", err)
	}
	select {
	case <-ch:
		t.Fatal("woken by a refused Resolve")
	default:
	}

	// After stop, changes are not sent; stop twice is harmless.
	stop()
	stop()
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1.2", Delivery: "k1", At: t0}
	if _, err := s.RecordMessage(ctx, q.ID, ref, core.Event{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("woken after stop")
	default:
	}
}

func TestSecondOpenFailsClearly(t *testing.T) {
	_, path := openTemp(t, bolt.Options{})
	_, err := bolt.Open(path, bolt.Options{Timeout: 50 * time.Millisecond})
	if err == nil {
		t.Fatal("second open of a locked file succeeded")
	}
	if !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("error %q does not say the file is locked", err)
	}
}

func TestListOpenPagesWithoutSkipOrRepeat(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	var all []*core.Question
	revs := []core.Reversibility{core.Reversible, core.HardToReverse, ""}
	for i := range 11 {
		// Equal created times for some, so the id decides.
		q := question(time.Duration(i/2)*time.Second, revs[i%3])
		mustCreate(t, s, q)
		all = append(all, q)
	}
	// Want: hard_to_reverse first, then oldest, then id.
	var want []string
	for _, hard := range []bool{true, false} {
		var group []*core.Question
		for _, q := range all {
			if (q.Reversibility == core.HardToReverse) == hard {
				group = append(group, q)
			}
		}
		for len(group) > 0 {
			best := 0
			for i, q := range group {
				b := group[best]
				if q.CreatedAt.Before(b.CreatedAt) || q.CreatedAt.Equal(b.CreatedAt) && q.ID < b.ID {
					best = i
				}
			}
			want = append(want, group[best].ID)
			group = append(group[:best], group[best+1:]...)
		}
	}

	var got []string
	cursor := ""
	closedOne := false
	for page := 0; ; page++ {
		qs, next, err := s.ListOpen(ctx, cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) > 3 {
			t.Fatalf("page of %d", len(qs))
		}
		for _, q := range qs {
			got = append(got, q.ID)
		}
		if next == "" {
			break
		}
		if !closedOne {
			// Closing the last listed question must not disturb the
			// next page.
			last := qs[len(qs)-1]
			if _, err := s.Resolve(ctx, answer(last, "ann", t0.Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
			closedOne = true
		}
		cursor = next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing order (-want +got):\n%s", diff)
	}
	if _, _, err := s.ListOpen(ctx, "not a cursor!", 3); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("bad cursor: %v, want invalid", err)
	}
}

func TestFormClosesWhenEveryItemIsAnswered(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	q := question(0, core.Reversible)
	q.Kind = core.KindForm
	opts := []core.FormOption{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}
	q.Items = []core.FormItem{{ID: "i1", Question: "one?", Options: opts}, {ID: "i2", Question: "two?", Options: opts}}
	mustCreate(t, s, q)
	d := core.Decider{Surface: core.SurfaceTelegram, ID: "7", Name: "tg"}
	res := &core.Resolution{State: core.StateAnswered, Decider: d, At: t0.Add(2 * time.Minute)}
	item := func(id string, at time.Time) core.Transition {
		return core.Transition{
			QuestionID: q.ID,
			Items:      []core.ItemAnswer{{ItemID: id, OptionID: "a", Decider: d, At: at}},
			Resolution: res,
			Event:      core.Event{Kind: core.EventAnswered, At: at},
			ItemEvent:  core.Event{Kind: core.EventItemAnswered, At: at},
			Now:        at,
		}
	}

	got, err := s.Resolve(ctx, item("i2", t0.Add(time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Open() || len(got.Answers) != 1 || got.Resolution != nil {
		t.Fatalf("after one item: state %s, %d answers", got.State, len(got.Answers))
	}
	if _, err := s.Resolve(ctx, item("i2", t0.Add(time.Minute))); core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
		t.Fatalf("answering i2 twice: %v, want a conflict that is not a close", err)
	}
	got, err = s.Resolve(ctx, item("i1", t0.Add(2*time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	if got.State != core.StateAnswered || got.Resolution == nil || got.Resolution.Decider.ID != d.ID {
		t.Fatalf("after both items: %+v", got)
	}
	if ids := []string{got.Answers[0].ItemID, got.Answers[1].ItemID}; ids[0] != "i1" || ids[1] != "i2" {
		t.Errorf("answers in order %v, want item order", ids)
	}
	stored, err := s.Get(ctx, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, stored); diff != "" {
		t.Errorf("Resolve result differs from stored (-result +stored):\n%s", diff)
	}
	evs, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []core.EventKind
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]core.EventKind{core.EventAsked, core.EventItemAnswered, core.EventAnswered}, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestPurgeDropsOldClosedQuestionsAndTheirEvents(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	old, recent, open := question(0, core.Reversible), question(time.Second, core.Reversible), question(2*time.Second, core.Reversible)
	for _, q := range []*core.Question{old, recent, open} {
		mustCreate(t, s, q)
	}
	if _, err := s.Resolve(ctx, answer(old, "ann", t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, answer(recent, "ann", t0.Add(3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, core.Event{QuestionID: old.ID, Kind: core.EventRefused, At: t0.Add(4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// A refusal naming no stored question is purged by age.
	if _, err := s.Append(ctx, core.Event{QuestionID: core.NewID(0), Kind: core.EventRefused, At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}

	n, err := s.Purge(ctx, t0.Add(2*time.Hour), 10)
	if err != nil || n != 1 {
		t.Fatalf("purge = %d, %v; want 1", n, err)
	}
	if _, err := s.Get(ctx, old.ID); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("purged question: %v, want not found", err)
	}
	evs, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkpoints := 0
	for _, e := range evs {
		if e.Kind == core.EventCheckpoint { // the audit chain's record of the purge
			checkpoints++
			continue
		}
		if e.QuestionID != recent.ID && e.QuestionID != open.ID {
			t.Errorf("event %d of %s survived the purge", e.Seq, e.QuestionID)
		}
	}
	if len(evs) != 4 || checkpoints != 1 {
		t.Errorf("%d events left (%d checkpoints), want 3 and 1 checkpoint", len(evs), checkpoints)
	}
	created, err := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Minute), 0)
	if err != nil || len(created) != 2 {
		t.Errorf("created index after purge = %d, %v; want 2", len(created), err)
	}
	closed, err := s.Between(ctx, core.ByClosed, t0, t0.Add(24*time.Hour), 0)
	if err != nil || len(closed) != 1 || closed[0].ID != recent.ID {
		t.Errorf("closed index after purge = %v, %v", closed, err)
	}
	if n, err := s.Purge(ctx, t0.Add(2*time.Hour), 10); err != nil || n != 0 {
		t.Errorf("second purge = %d, %v; want 0", n, err)
	}
}

func TestRecordMessageAfterCloseEnqueuesAnEdit(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	q := question(0, core.Reversible)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	posted := claimAll(t, s, core.SurfaceSlack, "c1", time.Hour)
	if _, err := s.Resolve(ctx, answer(q, "ann", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "9.9", Delivery: posted[0].Key, At: t0.Add(2 * time.Minute)}
	if _, err := s.RecordMessage(ctx, q.ID, ref, core.Event{}); err != nil {
		t.Fatal(err)
	}
	again, err := s.RecordMessage(ctx, q.ID, ref, core.Event{})
	if err != nil || len(again.Messages) != 1 {
		t.Fatalf("repeat record: %d messages, %v", len(again.Messages), err)
	}
	upd := claimAll(t, s, core.SurfaceSlack, "c1", time.Hour)
	if len(upd) != 1 || upd[0].Kind != core.DeliverUpdate || upd[0].Message == nil || upd[0].Message.ID != "9.9" {
		t.Fatalf("after a late card: %+v, want one update of it", upd)
	}
}

func TestCreateConflictsChangeNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	q := question(0, core.Reversible)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	if err := s.Create(ctx, q, asked(q), []core.Delivery{post(q, core.SurfaceSlack, "C2")}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("duplicate id: %v, want conflict", err)
	}
	if _, err := s.EndRun(ctx, core.Run{Agent: "agent-1", ID: "run-1"}.Key(), t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	ids, err := s.EndRun(ctx, core.Run{Agent: "agent-1", ID: "run-1"}.Key(), t0.Add(time.Hour))
	if err != nil || len(ids) != 1 || ids[0] != q.ID {
		t.Fatalf("second EndRun = %v, %v; want the open question", ids, err)
	}
	late := question(time.Minute, core.Reversible)
	if err := s.Create(ctx, late, asked(late), []core.Delivery{post(late, core.SurfaceSlack, "C3")}); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("ask into ended run: %v, want conflict", err)
	}
	if _, err := s.Get(ctx, late.ID); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("refused question was stored: %v", err)
	}
	evs, err := s.Events(ctx, 0, 0)
	if err != nil || len(evs) != 1 {
		t.Errorf("events after refusals = %d, %v; want only the first asked", len(evs), err)
	}
	if ds := claimAll(t, s, core.SurfaceSlack, "c", 0); len(ds) != 1 || ds[0].Room != "C1" {
		t.Errorf("deliveries after refusals = %+v, want only C1", ds)
	}
}

func TestRenotifyIfDeadlineActsOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, bolt.Options{})
	q := question(0, core.Reversible)
	mustCreate(t, s, q)
	r := core.Renotice{
		QuestionID: q.ID, IfDeadline: q.Deadline, Deadline: q.Deadline.Add(time.Hour), Count: true,
		Event:      core.Event{Kind: core.EventEscalated, At: q.Deadline},
		Deliveries: []core.Delivery{{Key: q.ID + "/esc", Kind: core.DeliverEscalate, Surface: core.SurfaceDiscord, Room: "D9"}},
		Now:        q.Deadline,
	}
	got, err := s.Renotify(ctx, r)
	if err != nil || got.Renotified != 1 || !got.Deadline.Equal(r.Deadline) {
		t.Fatalf("renotify = %+v, %v", got, err)
	}
	if _, err := s.Renotify(ctx, r); core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
		t.Fatalf("second renotify on the old deadline: %v, want conflict", err)
	}
	if due, err := s.Due(ctx, q.Deadline, 10); err != nil || len(due) != 0 {
		t.Errorf("due at the old deadline = %v, %v", due, err)
	}
	if due, err := s.Due(ctx, r.Deadline, 10); err != nil || len(due) != 1 {
		t.Errorf("due at the new deadline = %v, %v", due, err)
	}
	if ds := claimAll(t, s, core.SurfaceDiscord, "c", 0); len(ds) != 1 || ds[0].QuestionID != q.ID {
		t.Errorf("escalation deliveries = %+v", ds)
	}
}

func TestBeatSwaps(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t, bolt.Options{})
	if prev, err := s.Beat(ctx, t0); err != nil || !prev.IsZero() {
		t.Fatalf("first beat = %v, %v", prev, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path, bolt.Options{})
	if prev, err := s.Beat(ctx, t0.Add(time.Hour)); err != nil || !prev.Equal(t0) {
		t.Fatalf("beat after reopen = %v, %v; want %v", prev, err, t0)
	}
}
