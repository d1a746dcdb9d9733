package bolt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

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
	if len(re) != 1 || re[0].Room != "C2" || re[0].Attempts != 2 || re[0].Key != inflight[0].Key {
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
	want.ID = strings.Replace(want.ID, "replica-a", "replica-b", 1) // the claim's handle names its consumer
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
	if err := s.RecordMessage(ctx, q.ID, ref, core.Event{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordMessage(ctx, q.ID, ref, core.Event{}); err != nil {
		t.Fatalf("repeat record: %v", err)
	}
	if again, err := s.Get(ctx, q.ID); err != nil || len(again.Messages) != 1 {
		t.Fatalf("after a repeat record: %+v, %v", again, err)
	}
	upd := claimAll(t, s, core.SurfaceSlack, "c1", time.Hour)
	if len(upd) != 1 || upd[0].Kind != core.DeliverUpdate || upd[0].Message == nil || upd[0].Message.ID != "9.9" {
		t.Fatalf("after a late card: %+v, want one update of it", upd)
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
		Deliveries: []core.Delivery{{Key: string(q.ID) + "/esc", Kind: core.DeliverEscalate, Surface: core.SurfaceDiscord, Room: "D9"}},
		Now:        q.Deadline,
	}
	if err := s.Renotify(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, q.ID); err != nil || got.Renotified != 1 || !got.Deadline.Equal(r.Deadline) {
		t.Fatalf("after renotify: %+v, %v", got, err)
	}
	if err := s.Renotify(ctx, r); core.ErrorCode(err) != core.CodeConflict || errors.Is(err, core.ErrClosed) {
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

// TestOutboxInput: a delivery id this store did not hand out is refused
// as invalid by Ack, Retry and Extend: the old form without its consumer,
// an empty consumer, a sequence written otherwise than the store writes
// it, and the first entry's zero.
func TestOutboxInput(t *testing.T) {
	s, _ := openTemp(t, bolt.Options{})
	ctx := t.Context()
	for _, id := range []string{"", "x", "1", "1/", "/c", "01/c", "+1/c", "0/c", "x/c"} {
		if err := s.Ack(ctx, core.SurfaceSlack, id); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("ack %q: %v, want invalid", id, err)
		}
		d := core.Delivery{ID: id, Surface: core.SurfaceSlack}
		if err := s.Retry(ctx, d, "c", 0); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("retry %q: %v, want invalid", id, err)
		}
		if _, err := s.Extend(ctx, core.SurfaceSlack, "c", []string{id}); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("extend %q: %v, want invalid", id, err)
		}
	}
}
