package bolt_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
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
	return core.Delivery{Key: string(q.ID) + "/post/" + string(s) + "/" + room, Kind: core.DeliverPost, Surface: s, Room: room, QuestionID: q.ID, CreatedAt: q.CreatedAt}
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
	if err := s.RecordMessage(ctx, q.ID, ref, core.Event{}); err != nil {
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
	var want []core.QuestionID
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

	var got []core.QuestionID
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
