package core_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// claimStuck is a store away for a moment while a re-notice is stored:
// its next Renotify fails, and so does the next Release of a claim whose
// key starts with prefix, so the claim taken for the re-notice is not
// given back.
type claimStuck struct {
	core.Store
	prefix            string
	renotify, release atomic.Int32 // failures left
}

func (s *claimStuck) Renotify(ctx context.Context, r core.Renotice) error {
	if s.renotify.Add(-1) >= 0 {
		return errors.New("claimStuck: the store is away")
	}
	return s.Store.Renotify(ctx, r)
}

func (s *claimStuck) Release(ctx context.Context, key, owner string) error {
	if strings.HasPrefix(key, s.prefix) && s.release.Add(-1) >= 0 {
		return errors.New("claimStuck: the store is away")
	}
	return s.Store.Release(ctx, key, owner)
}

func newClaimStuck(t *testing.T, prefix string) *claimStuck {
	st := &claimStuck{Store: coretest.OpenStore(t), prefix: prefix}
	return st
}

// TestACatchUpReNoticeWhoseClaimWasNotGivenBackIsStored: a re-notice after
// a downtime that failed, with the store away too long to give its claim
// back, is stored at the retry: the claim is this replica's, and the
// retry takes it as its own. Before, the retry found the claim held,
// took it for one stored already, and the catch-up finished with the
// question never re-notified and nothing in its log to say so (law 8).
func TestACatchUpReNoticeWhoseClaimWasNotGivenBackIsStored(t *testing.T) {
	st := newClaimStuck(t, "away:")
	svc, clock, ids := askedBeforeDowntime(t, st, 1)
	st.renotify.Store(1)
	st.release.Store(1)
	if _, done, err := svc.CatchUp(t.Context(), "a"); err == nil || done {
		t.Fatalf("a catch-up whose re-notice failed: done %v, %v; want the failure reported, not done", done, err)
	}
	clock.Advance(time.Second)
	n, done, err := svc.CatchUp(t.Context(), "a")
	if err != nil || !done || n != 1 {
		t.Fatalf("the retry: reminded %d, done %v, %v; want the question re-notified and the catch-up done", n, done, err)
	}
	if got := eventsOfKind(t, svc, ids[0], core.EventReminded); got != 1 {
		t.Fatalf("%d reminded events; want the re-notice recorded once", got)
	}
}

// TestAReminderWhoseClaimWasNotGivenBackIsSent: a reminder that failed to
// be stored, with the store away too long to give its claim back, is
// sent by the next pass. Before, the next pass found the claim held, took
// it for a reminder sent already, and the reminder was never sent.
func TestAReminderWhoseClaimWasNotGivenBackIsSent(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := newClaimStuck(t, "remind:")
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	st.renotify.Store(1)
	st.release.Store(1)
	if n, err := svc.Remind(ctx); err == nil || n != 0 {
		t.Fatalf("a pass whose reminder failed = %d, %v; want the failure reported", n, err)
	}
	clock.Advance(10 * time.Second)
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("the next pass = %d, %v; want the reminder sent", n, err)
	}
	if got := eventsOfKind(t, svc, q.ID, core.EventReminded); got != 1 {
		t.Fatalf("%d reminded events; want the reminder recorded once", got)
	}
}
