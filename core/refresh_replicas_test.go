package core_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// replicas are services over one store, each with its own configuration,
// as replicas of one bridge are, and one Discord channel of cards.
type replicas struct {
	t     *testing.T
	st    core.Store
	clock *core.SimClock
	cards *tallyCards
	q     *core.Question
}

func newReplicas(t *testing.T) *replicas {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	return &replicas{t: t, st: coretest.OpenStoreOn(t, clock.Now), clock: clock, cards: &tallyCards{shows: map[string]string{}}}
}

// start is a replica started with members on the route.
func (r *replicas) start(members ...string) *core.Service {
	r.t.Helper()
	svc, err := core.New(r.st, postedVoters(members...), r.clock)
	if err != nil {
		r.t.Fatal(err)
	}
	return svc
}

// ask has svc ask a question of two, posts its card and has alice
// approve it, through svc.
func (r *replicas) ask(svc *core.Service) {
	r.t.Helper()
	q, err := svc.Ask(r.t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?",
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	if err != nil || q.Quorum != 2 {
		r.t.Fatalf("ask: %+v, %v", q, err)
	}
	r.q = q
	r.deliver(svc)
	if _, err := svc.Answer(r.t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice-tok"},
		OptionID: core.ApproveOption}); err != nil {
		r.t.Fatal(err)
	}
	r.deliver(svc)
	if got := r.card(svc); got != aliceCounts {
		r.t.Fatalf("the card after alice's vote: %q", got)
	}
}

// deliver has svc send what the outbox holds and returns how many card
// edits that was.
func (r *replicas) deliver(svc *core.Service) int {
	r.t.Helper()
	ctx := r.t.Context()
	ds, err := r.st.Claim(ctx, core.SurfaceDiscord, "c1", 100, time.Hour, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	edits := 0
	for _, d := range ds {
		if err := svc.DeliverOne(ctx, r.cards, d, nil); err != nil {
			r.t.Fatalf("%s %s: %v", d.Kind, d.Key, err)
		}
		if err := r.st.Ack(ctx, core.SurfaceDiscord, d.ID); err != nil {
			r.t.Fatal(err)
		}
		if d.Kind == core.DeliverUpdate {
			edits++
		}
	}
	return edits
}

func (r *replicas) tick(svcs ...*core.Service) {
	r.t.Helper()
	for _, svc := range svcs {
		if _, err := svc.Tick(r.t.Context()); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *replicas) reload(svc *core.Service, members ...string) {
	r.t.Helper()
	if err := svc.Reconfigure(postedVoters(members...)); err != nil {
		r.t.Fatal(err)
	}
}

// card is what the question's card shows.
func (r *replicas) card(svc *core.Service) string {
	r.t.Helper()
	q, err := svc.Get(r.t.Context(), r.q.ID)
	if err != nil || len(q.Messages) != 1 {
		r.t.Fatalf("the question's cards: %+v, %v", q, err)
	}
	return r.cards.shows[q.Messages[0].ID]
}

// TestAReloadOnEveryReplicaEditsACardOnce: every replica reloads the
// same file, and the card whose tally it changed is edited once, not
// once per replica. Before, each replica's ticker swept after its own
// reload, and three replicas edited the card three times.
func TestAReloadOnEveryReplicaEditsACardOnce(t *testing.T) {
	r := newReplicas(t)
	svcs := []*core.Service{r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol")}
	r.ask(svcs[0])
	r.tick(svcs...)
	for _, svc := range svcs {
		r.reload(svc, "bob", "carol")
	}
	edits := 0
	for range 3 {
		r.tick(svcs...)
		edits += r.deliver(svcs[1])
	}
	if edits != 1 {
		t.Errorf("the card was edited %d times after the reload on three replicas; want once", edits)
	}
	if got := r.card(svcs[0]); got != aliceCountsNot {
		t.Errorf("the card: %q, want %q", got, aliceCountsNot)
	}
}

// TestAStartUnderAnotherConfigurationEditsTheCards: the bridge stopped,
// its file changed, and started again: the card posted before the stop,
// whose tally the new file changes, is edited at the new start's first
// ticks. Before, only a reload swept, and the card went on counting
// alice's vote until its next edit. A start under the same file edits
// nothing.
func TestAStartUnderAnotherConfigurationEditsTheCards(t *testing.T) {
	r := newReplicas(t)
	before := r.start("alice", "bob", "carol")
	r.ask(before)
	r.tick(before)

	r.clock.Advance(time.Minute) // the restart
	after := r.start("bob", "carol")
	edits := 0
	for range 2 {
		r.tick(after)
		edits += r.deliver(after)
	}
	if got := r.card(after); edits != 1 || got != aliceCountsNot {
		t.Errorf("after the start under the new file: %d edits, the card %q; want one edit, showing %q", edits, got, aliceCountsNot)
	}

	r.clock.Advance(time.Minute)
	again := r.start("bob", "carol")
	r.tick(again, again)
	if edits := r.deliver(again); edits != 0 {
		t.Errorf("a start under the same file edited %d cards", edits)
	}
}

// TestAReplicaStillOnTheOldFileHoldsTheSweepOff: a replica that has not
// reloaded yet renders every card with the old tally; the sweep runs
// again once it has reloaded (and lagHold has passed), so the card ends
// showing the new tally whichever replica rendered it last.
func TestAReplicaStillOnTheOldFileHoldsTheSweepOff(t *testing.T) {
	r := newReplicas(t)
	a, b := r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol")
	r.ask(a)
	r.tick(a, b)
	r.reload(a, "bob", "carol")
	r.tick(a, b)
	// b, on the old file, renders the sweep's edit: the old tally.
	if edits := r.deliver(b); edits != 1 || r.card(b) != aliceCounts {
		t.Fatalf("b rendered %d edits, the card %q", edits, r.card(b))
	}
	r.reload(b, "bob", "carol")
	r.tick(a, b)
	if edits := r.deliver(b); edits != 0 {
		t.Errorf("the sweep ran again within lagHold of b's last tick on the old file: %d edits", edits)
	}
	r.clock.Advance(time.Minute)
	r.tick(a, b, a, b)
	if edits := r.deliver(b); edits != 1 || r.card(b) != aliceCountsNot {
		t.Errorf("once b reloaded: %d edits, the card %q; want one edit, showing %q", edits, r.card(b), aliceCountsNot)
	}
}

// TestALaggardMidSweepHasItsPagesSweptAgain: a sweep of several pages
// that a replica still on the old file joins partway (its first tick
// after the reload came after the sweep's first page) is held off, and
// then begins again from its first page: the laggard may have rendered
// that page's edits with the old tally. Before, the sweep went on from
// where it had stopped, and the card of its first page kept counting
// alice's vote.
func TestALaggardMidSweepHasItsPagesSweptAgain(t *testing.T) {
	r := newReplicas(t)
	a, b := r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol")
	core.SetRefreshLimits(a, 1, 100, 100)
	core.SetRefreshLimits(b, 1, 100, 100)
	r.ask(a)
	first := r.q
	r.clock.Advance(time.Second)
	r.ask(a)
	second := r.q
	r.tick(a, b)
	r.reload(a, "bob", "carol")
	r.tick(a) // the sweep's first page, before b has said it lags
	r.tick(b)
	// b, on the old file, renders the first page's edit: the old tally.
	if edits := r.deliver(b); edits != 1 {
		t.Fatalf("b rendered %d edits of the sweep's first page; want 1", edits)
	}
	r.reload(b, "bob", "carol")
	r.clock.Advance(time.Minute)
	for range 4 {
		r.tick(a, b)
		r.deliver(b)
	}
	for _, q := range []*core.Question{first, second} {
		r.q = q
		if got := r.card(b); got != aliceCountsNot {
			t.Errorf("the card of %s once b reloaded: %q, want %q", q.ID, got, aliceCountsNot)
		}
	}
}

// TestAReloadOfTheSameFileDoesNotOutrankANewerOne: a replica that reads
// its old file again (a SIGHUP before the new file reached it) after
// another put the new one in force still lags behind it: it does not
// take the cards back to the old tally. Before, its reload counted as
// the newer, its sweep edited the card back, and the other replica's
// sweep edited it again.
func TestAReloadOfTheSameFileDoesNotOutrankANewerOne(t *testing.T) {
	r := newReplicas(t)
	a, b := r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol")
	r.ask(a)
	r.tick(a, b)
	r.reload(a, "bob", "carol")
	r.tick(a)
	if edits := r.deliver(a); edits != 1 || r.card(a) != aliceCountsNot {
		t.Fatalf("after a's reload: %d edits, the card %q", edits, r.card(a))
	}
	r.clock.Advance(time.Second)
	r.reload(b, "alice", "bob", "carol") // b's file, unchanged
	r.tick(b, a, b)
	if edits := r.deliver(a); edits != 0 {
		t.Errorf("b's reload of its unchanged file edited the card %d times, to %q", edits, r.card(a))
	}
}

// cardsWrites is a store counting the writes of the cards' record
// (core's "core:cards" value).
type cardsWrites struct {
	core.Store
	n atomic.Int32
}

func (s *cardsWrites) SetValue(ctx context.Context, key, val string) error {
	if key == "core:cards" {
		s.n.Add(1)
	}
	return s.Store.SetValue(ctx, key, val)
}

func (s *cardsWrites) SetValueIf(ctx context.Context, key, old, val string) (bool, error) {
	if key == "core:cards" {
		s.n.Add(1)
	}
	return s.Store.SetValueIf(ctx, key, old, val)
}

// TestLaggardsJoinTheSweepOnce: two replicas still on the old file each
// say so to the cards' record once, not at every tick: neither takes the
// other's word for news of its own.
func TestLaggardsJoinTheSweepOnce(t *testing.T) {
	r := newReplicas(t)
	w := &cardsWrites{Store: r.st}
	r.st = w
	a, b, c := r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol"), r.start("alice", "bob", "carol")
	r.ask(a)
	r.tick(a, b, c)
	r.reload(a, "bob", "carol")
	r.tick(a)
	before := w.n.Load()
	for range 10 {
		r.tick(b, c, a)
	}
	if got := w.n.Load() - before; got > 2 {
		t.Errorf("two laggards wrote the cards' record %d times in ten ticks each; want once each", got)
	}
}
