package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

func TestResolveRaceExactlyOneWins(t *testing.T) {
	s, _ := openTemp(t, bolt.Options{})
	ctx := context.Background()
	q := question(0, core.HardToReverse)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.01", Delivery: string(q.ID) + "/post/slack/C1", At: t0}
	if err := s.RecordMessage(ctx, q.ID, ref, core.Event{Kind: core.EventNotified, At: t0}); err != nil {
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
