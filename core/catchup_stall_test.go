package core_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// stuckRenotify is a store that lists one open question a page, so a
// catch-up goes through several pages, and whose Renotify of one question
// fails while failing is set (every attempt counted).
type stuckRenotify struct {
	core.Store
	mu       sync.Mutex
	stuck    core.QuestionID
	failing  bool
	attempts int
}

func (s *stuckRenotify) ListOpen(ctx context.Context, cursor string, _ int) ([]*core.Question, string, error) {
	return s.Store.ListOpen(ctx, cursor, 1)
}

func (s *stuckRenotify) Renotify(ctx context.Context, r core.Renotice) error {
	s.mu.Lock()
	if r.QuestionID == s.stuck {
		s.attempts++
		if s.failing {
			s.mu.Unlock()
			return errors.New("stuckRenotify: this question's shard is down")
		}
	}
	s.mu.Unlock()
	return s.Store.Renotify(ctx, r)
}

func (s *stuckRenotify) tries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

func (s *stuckRenotify) set(failing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = failing
}

// stalledCatchUp is a service over a stuckRenotify whose first listed
// question (stuck) cannot be re-notified, three questions asked on it
// before a downtime of two hours that a second boot recorded.
func stalledCatchUp(t *testing.T) (*core.Service, *core.SimClock, *stuckRenotify, []core.QuestionID) {
	t.Helper()
	st := &stuckRenotify{Store: coretest.OpenStore(t)}
	svc, clock, ids := askedBeforeDowntime(t, st, 3)
	st.stuck = ids[0]
	st.set(true)
	return svc, clock, st, ids
}

// askedBeforeDowntime is a service over st with n open questions, asked
// a second apart (oldest first: ids[0] is listed first), before a
// downtime of two hours that a second boot recorded.
func askedBeforeDowntime(t *testing.T, st core.Store, n int) (*core.Service, *core.SimClock, []core.QuestionID) {
	t.Helper()
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	svc := coretest.Service(t, st, coretest.Options{Clock: clock})
	if _, err := svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []core.QuestionID
	for range n {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
			Reversibility: core.Reversible, Timeout: 20 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ID)
		clock.Advance(time.Second)
	}
	clock.Advance(2 * time.Hour)
	if rep, err := svc.Boot(ctx); err != nil || rep.Down == 0 {
		t.Fatalf("boot after downtime: %+v, %v", rep, err)
	}
	return svc, clock, ids
}

// eventsOfKind counts id's events of kind.
func eventsOfKind(t *testing.T, svc *core.Service, id core.QuestionID, kind core.EventKind) int {
	t.Helper()
	n := 0
	for _, e := range coretest.EventsOf(t, svc, id) {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// TestCatchUpGoesPastAQuestionItCannotRenotify: one open question whose
// re-notice keeps failing does not hold up the questions listed after it:
// they are re-notified at once, and the failure is reported. Before, the
// cursor stopped at it, and every later question waited for ever.
func TestCatchUpGoesPastAQuestionItCannotRenotify(t *testing.T) {
	svc, clock, _, ids := stalledCatchUp(t)
	if _, done, err := svc.CatchUp(t.Context(), "a"); err == nil || done {
		t.Fatalf("a catch-up with a re-notice failing: done %v, %v; want the failure reported, not done", done, err)
	}
	for range 3 {
		clock.Advance(time.Second)
		if _, done, _ := svc.CatchUp(t.Context(), "a"); done {
			t.Fatal("the catch-up is done with a re-notice never stored")
		}
	}
	for _, id := range ids[1:] {
		if n := eventsOfKind(t, svc, id, core.EventReminded); n != 1 {
			t.Errorf("%s, listed after the failing question, was re-notified %d times; want once", id, n)
		}
	}
}

// TestCatchUpGivesUpOnAQuestionBoundedAndSaysSo: a question whose
// re-notice keeps failing is tried again with a growing pause between
// tries (a call before its pause is over tries nothing), at most
// catchUpTries times; then the catch-up is done and the question's log
// records the re-notice given up on (law 8), rather than the catch-up
// retrying it every tick for ever.
func TestCatchUpGivesUpOnAQuestionBoundedAndSaysSo(t *testing.T) {
	svc, clock, st, ids := stalledCatchUp(t)
	ctx := t.Context()
	if _, done, err := svc.CatchUp(ctx, "a"); err == nil || done {
		t.Fatalf("first catch-up: done %v, %v", done, err)
	}
	var (
		done    bool
		lastErr error
		calls   int
	)
	for !done && calls < 1000 {
		before := st.tries()
		var err error
		_, done, err = svc.CatchUp(ctx, "a")
		if err != nil {
			lastErr = err
		}
		calls++
		// The loop that calls CatchUp does so every second, for as long
		// as it is not done: the pause is the catch-up's to keep.
		if !done {
			if _, _, err := svc.CatchUp(ctx, "a"); err != nil {
				lastErr = err
			}
		}
		if st.tries() > before+1 {
			t.Fatalf("call %d: %d tries of the failing question within one instant; want at most one", calls, st.tries()-before)
		}
		clock.Advance(time.Second)
	}
	if !done {
		t.Fatalf("the catch-up is not done after %d calls, a second apart", calls)
	}
	if lastErr == nil || !strings.Contains(lastErr.Error(), string(ids[0])) || !strings.Contains(lastErr.Error(), "given up") {
		t.Errorf("the last failure reported: %v; want the question given up on named", lastErr)
	}
	if tries := st.tries(); tries < 3 || tries > 10 {
		t.Errorf("the failing question was tried %d times; want a few, bounded", tries)
	}
	if calls < 60 {
		t.Errorf("gave up after %d calls a second apart: tries with no pause between them", calls)
	}
	if n := eventsOfKind(t, svc, ids[0], core.EventUndelivered); n != 1 {
		t.Errorf("the question given up on has %d undelivered events; want 1", n)
	}
	if n := eventsOfKind(t, svc, ids[0], core.EventReminded); n != 0 {
		t.Errorf("the question given up on has %d reminded events", n)
	}
	if _, done, err := svc.CatchUp(ctx, "a"); !done || err != nil {
		t.Errorf("a catch-up after it finished: done %v, %v", done, err)
	}
}

// TestCatchUpRetriesAQuestionOnceItsStoreIsBack: a question whose
// re-notice failed is re-notified, once, by a later call after the store
// recovers, and the catch-up is then done; the questions after it are
// re-notified once, not again on its retry.
func TestCatchUpRetriesAQuestionOnceItsStoreIsBack(t *testing.T) {
	svc, clock, st, ids := stalledCatchUp(t)
	ctx := t.Context()
	if _, done, err := svc.CatchUp(ctx, "a"); err == nil || done {
		t.Fatalf("first catch-up: done %v, %v", done, err)
	}
	st.set(false)
	var done bool
	for i := 0; !done && i < 100; i++ {
		clock.Advance(time.Second)
		var err error
		if _, done, err = svc.CatchUp(ctx, "b"); err != nil {
			t.Fatalf("catch-up with the store back: %v", err)
		}
	}
	if !done {
		t.Fatal("the catch-up is not done with the store back")
	}
	remindedOnce(t, svc, ids)
	if n := eventsOfKind(t, svc, ids[0], core.EventUndelivered); n != 0 {
		t.Errorf("the question re-notified late has %d undelivered events", n)
	}
}

// manyStuck is a store that lists one open question a page and fails
// the re-notice of every question but spared.
type manyStuck struct {
	core.Store
	spared core.QuestionID
}

func (s *manyStuck) ListOpen(ctx context.Context, cursor string, _ int) ([]*core.Question, string, error) {
	return s.Store.ListOpen(ctx, cursor, 1)
}

func (s *manyStuck) Renotify(ctx context.Context, r core.Renotice) error {
	if r.QuestionID != s.spared {
		return errors.New("manyStuck: this question's shard is down")
	}
	return s.Store.Renotify(ctx, r)
}

// TestCatchUpGoesPastMoreFailuresThanItKeeps: more questions fail to be
// re-notified than the record keeps for retrying (a hundred), and the
// retries it keeps are still tried, and given up on, while the listing
// waits for room, so the question listed after them is re-notified.
// Before, the retries were tried only once the listing had ended, and
// the listing waited for them to make room: the page past the hundredth
// failure was taken again every second for as long as the bridge ran,
// and nobody after it was re-notified.
func TestCatchUpGoesPastMoreFailuresThanItKeeps(t *testing.T) {
	st := &manyStuck{Store: coretest.OpenStore(t)}
	svc, clock, ids := askedBeforeDowntime(t, st, 102)
	last := ids[len(ids)-1]
	st.spared = last
	done := false
	for calls := 0; !done && calls < 1000; calls++ {
		_, done, _ = svc.CatchUp(t.Context(), "a")
		clock.Advance(time.Second)
	}
	if n := eventsOfKind(t, svc, last, core.EventReminded); n != 1 || !done {
		t.Fatalf("the question listed after 101 that cannot be re-notified: re-notified %d times, catch-up done %v; want once, done", n, done)
	}
}
