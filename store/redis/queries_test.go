package redis_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestListOpenTies pages through questions that all share one created
// millisecond, with pages that split the ties, and checks nothing is
// skipped or repeated and the order is class, time, id.
func TestListOpenTies(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	var hard, soft []core.QuestionID
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
	want := append(sortedIDs(hard...), append([]core.QuestionID{older.ID}, sortedIDs(soft...)...)...)
	for _, size := range []int{1, 2, 3, 5, 100} {
		var got []core.QuestionID
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
	// Seqs go up in the order the events were appended. They follow the
	// server's clock (µs), not a count, so that a failover that loses
	// the newest events does not number new ones as the lost ones were.
	for i, e := range all {
		if i > 0 && e.Seq <= all[i-1].Seq {
			t.Fatalf("event %d has seq %d, after %d", i, e.Seq, all[i-1].Seq)
		}
	}
	if now := time.Now().UnixMicro(); all[0].Seq < now-time.Hour.Microseconds() || all[6].Seq > now+time.Hour.Microseconds() {
		t.Fatalf("seqs %d..%d do not follow the clock (now %d µs)", all[0].Seq, all[6].Seq, now)
	}
	if refused.Seq != all[5].Seq || loose.Seq != all[6].Seq {
		t.Fatalf("appended seqs %d, %d", refused.Seq, loose.Seq)
	}
	page, _ := s.Events(ctx, all[2].Seq, 2)
	if len(page) != 2 || page[0].Seq != all[3].Seq || page[1].Seq != all[4].Seq {
		t.Fatalf("events since the third, limit 2: %+v", page)
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
	if diff := cmp.Diff([]int64{all[1].Seq, all[2].Seq, all[4].Seq}, seqs); diff != "" {
		t.Fatalf("remaining seqs (-want +got):\n%s", diff)
	}
	if got, _ := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Millisecond), 10); len(got) != 2 {
		t.Fatalf("created index after purge: %v", got)
	}
	if n, err := s.Purge(ctx, t0.Add(2*time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("second purge: %d, %v", n, err)
	}
	// New events keep counting up after a purge (and its checkpoint).
	e, err := s.Append(ctx, core.Event{QuestionID: kept.ID, At: t0, Kind: core.EventRefused})
	if err != nil || e.Seq <= left[len(left)-1].Seq {
		t.Fatalf("append after purge: %+v, %v; the log ended at %d", e, err, left[len(left)-1].Seq)
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

// TestDueSkipsClosed: a close leaves its question in the deadline index;
// Due drops such entries and still fills its page with open questions.
func TestDueSkipsClosed(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, redisstore.Options{})
	var open []core.QuestionID
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
