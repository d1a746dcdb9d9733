package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// unconfirmedLease is the real store, whose first lease of a key that
// begins with prefix is taken and then reported maybe-taken: a durable
// Redis whose replicas did not confirm it in time (it is on the primary
// all the same).
type unconfirmedLease struct {
	core.Store
	prefix string
	failed bool
}

func (s *unconfirmedLease) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	first, err := s.Store.Lease(ctx, key, owner, ttl)
	if err != nil || s.failed || !strings.HasPrefix(key, s.prefix) {
		return first, err
	}
	s.failed = true
	return false, fmt.Errorf("lease %s: replicas did not confirm it: %w", key, core.ErrUnavailable)
}

// repeatRecorder posts cards and keeps whether each was flagged as a
// possible repeat.
type repeatRecorder struct{ repeats []bool }

func (*repeatRecorder) Surface() core.Surface { return core.SurfaceTelegram }
func (r *repeatRecorder) Post(_ context.Context, _ *core.Question, card core.MessageRef) (core.MessageRef, error) {
	r.repeats = append(r.repeats, card.Repeat)
	card.ID = fmt.Sprint(len(r.repeats))
	return card, nil
}
func (*repeatRecorder) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (*repeatRecorder) Remind(context.Context, *core.Question, string) error          { return nil }
func (*repeatRecorder) Digest(context.Context, core.Digest, string) error             { return nil }

// TestAnUnconfirmedPostingMarkIsGivenBack: a card's posting mark that the
// store took but could not confirm (a durable store's replicas were
// slow) is given back, as nothing was posted: the retry's card is the
// only one and goes out unflagged. Before, the mark stayed, and the retry
// flagged its card "may be a repeat" of one never posted.
func TestAnUnconfirmedPostingMarkIsGivenBack(t *testing.T) {
	ctx := t.Context()
	st := &unconfirmedLease{Store: coretest.OpenStore(t), prefix: "posting:"}
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceTelegram, ID: "-100"}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}})
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?", Reversibility: core.Reversible, Route: "ops"}); err != nil {
		t.Fatal(err)
	}
	ds, err := st.Claim(ctx, core.SurfaceTelegram, "c1", 10, time.Hour, 0)
	if err != nil || len(ds) != 1 || ds[0].Kind != core.DeliverPost {
		t.Fatalf("the ask's deliveries: %+v, %v", ds, err)
	}
	c := &repeatRecorder{}
	err = svc.DeliverOne(ctx, c, ds[0], nil)
	if sf, ok := errors.AsType[*core.StoreFailed](err); !ok || !core.Unavailable(sf) {
		t.Fatalf("the post whose mark was not confirmed: %v; want a store failure", err)
	}
	if err := svc.DeliverOne(ctx, c, ds[0], nil); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if len(c.repeats) != 1 || c.repeats[0] {
		t.Fatalf("cards posted, flagged as a possible repeat: %v; want one, unflagged", c.repeats)
	}
}

// TestAnUnconfirmedReminderClaimIsGivenBack: a reminder's claim the store
// took but could not confirm is given back, and the next pass sends the
// reminder. Before, the claim stayed under an owner that sent nothing,
// and that reminder was never sent.
func TestAnUnconfirmedReminderClaimIsGivenBack(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &unconfirmedLease{Store: coretest.OpenStore(t), prefix: "remind:"}
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "ops"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if n, err := svc.Remind(ctx); !core.Unavailable(err) || n != 0 {
		t.Fatalf("a pass whose claim was not confirmed: %d, %v", n, err)
	}
	if n, err := svc.Remind(ctx); err != nil || n != 1 {
		t.Fatalf("the next pass: %d, %v; want the reminder sent", n, err)
	}
}
