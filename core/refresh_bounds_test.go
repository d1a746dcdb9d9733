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

// sweepFixture is a service whose open questions each have one card in
// a Discord channel (tallyCards) and alice's approve.
type sweepFixture struct {
	t     *testing.T
	st    core.Store
	svc   *core.Service
	cards *tallyCards
	qs    []*core.Question
}

// newSweepFixture asks n questions a second apart, so that the open
// questions list in the order asked.
func newSweepFixture(t *testing.T, st core.Store, n int) *sweepFixture {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(st, postedVoters("alice", "bob", "carol"), clock)
	if err != nil {
		t.Fatal(err)
	}
	f := &sweepFixture{t: t, st: st, svc: svc, cards: &tallyCards{shows: map[string]string{}}}
	for i := range n {
		clock.Advance(time.Second)
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?",
			Reversibility: core.HardToReverse, Tool: fmt.Sprintf("deploy%d", i), Arguments: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		f.qs = append(f.qs, q)
	}
	f.deliver()
	for _, q := range f.qs {
		f.vote(q, "alice")
	}
	f.deliver()
	return f
}

func (f *sweepFixture) vote(q *core.Question, who string) {
	f.t.Helper()
	if _, err := f.svc.Answer(f.t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: who + "-tok"},
		OptionID: core.ApproveOption}); err != nil {
		f.t.Fatal(err)
	}
}

// deliver sends what the Discord outbox holds, and returns how many
// card edits it held for each question.
func (f *sweepFixture) deliver() map[core.QuestionID]int {
	f.t.Helper()
	ctx := f.t.Context()
	ds, err := f.st.Claim(ctx, core.SurfaceDiscord, "c1", 100, time.Hour, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	edits := map[core.QuestionID]int{}
	for _, d := range ds {
		if err := f.svc.DeliverOne(ctx, f.cards, d, nil); err != nil {
			f.t.Fatalf("%s %s: %v", d.Kind, d.Key, err)
		}
		if err := f.st.Ack(ctx, core.SurfaceDiscord, d.ID); err != nil {
			f.t.Fatal(err)
		}
		if d.Kind == core.DeliverUpdate {
			edits[d.QuestionID]++
		}
	}
	return edits
}

func (f *sweepFixture) reload(members ...string) {
	f.t.Helper()
	if err := f.svc.Reconfigure(postedVoters(members...)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *sweepFixture) tick() core.TickReport {
	f.t.Helper()
	rep, err := f.svc.Tick(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	return rep
}

// card is what question i's card shows.
func (f *sweepFixture) card(i int) string {
	f.t.Helper()
	q, err := f.svc.Get(f.t.Context(), f.qs[i].ID)
	if err != nil || len(q.Messages) != 1 {
		f.t.Fatalf("question %d's cards: %+v, %v", i, q, err)
	}
	return f.cards.shows[q.Messages[0].ID]
}

const (
	aliceCounts    = "1 of 2 approvals: alice-tok"
	aliceCountsNot = "0 of 2 approvals; 1 no longer counts, its voter off the route: alice-tok"
)

// TestTheSweepAfterAReloadIsBounded: the sweep that edits the cards a
// reload changed lists the open questions a page a tick, edits the cards
// of at most its bound of questions (and lists at most its bound), and
// says when it stopped at one; a card past the bound shows the reload's
// tally at its next edit.
func TestTheSweepAfterAReloadIsBounded(t *testing.T) {
	f := newSweepFixture(t, coretest.OpenStore(t), 4)
	core.SetRefreshLimits(f.svc, 2, 100, 3)
	f.reload("bob", "carol")
	for i, want := range []core.TickReport{{Refreshed: 2}, {Refreshed: 1, RefreshCut: true}, {}} {
		if rep := f.tick(); rep != want {
			t.Errorf("tick %d: %+v, want %+v", i+1, rep, want)
		}
	}
	f.deliver()
	for i, want := range []string{aliceCountsNot, aliceCountsNot, aliceCountsNot, aliceCounts} {
		if got := f.card(i); got != want {
			t.Errorf("card %d: %q, want %q", i, got, want)
		}
	}
	f.vote(f.qs[3], "bob") // its next edit
	f.deliver()
	if got, want := f.card(3), "1 of 2 approvals: bob-tok; 1 no longer counts, its voter off the route: alice-tok"; got != want {
		t.Errorf("card 3 after bob's vote: %q, want %q", got, want)
	}

	// The listing's bound: two listed, and the sweep stops.
	f = newSweepFixture(t, coretest.OpenStore(t), 3)
	core.SetRefreshLimits(f.svc, 2, 2, 100)
	f.reload("bob", "carol")
	for i, want := range []core.TickReport{{Refreshed: 2, RefreshCut: true}, {}} {
		if rep := f.tick(); rep != want {
			t.Errorf("listing bound, tick %d: %+v, want %+v", i+1, rep, want)
		}
	}
	if edits := f.deliver(); len(edits) != 2 || edits[f.qs[2].ID] != 0 {
		t.Errorf("listing bound: edits %v, want questions 0 and 1's", edits)
	}
}

// TestAReloadDuringTheSweepComparesWithWhatTheCardsShow: a reload while
// a sweep is under way begins it again, comparing the tallies with each
// configuration the cards not yet reached may show. Here the first
// reload takes alice off, and the second adds dave: by the second alone
// no tally changes, but the card the first sweep did not reach still
// counts alice's vote.
func TestAReloadDuringTheSweepComparesWithWhatTheCardsShow(t *testing.T) {
	f := newSweepFixture(t, coretest.OpenStore(t), 2)
	core.SetRefreshLimits(f.svc, 1, 100, 100)
	f.reload("bob", "carol")
	if rep := f.tick(); rep.Refreshed != 1 {
		t.Fatalf("the first tick: %+v", rep)
	}
	f.reload("bob", "carol", "dave")
	for range 3 {
		f.tick()
	}
	f.deliver()
	for i := range f.qs {
		if got := f.card(i); got != aliceCountsNot {
			t.Errorf("card %d: %q, want %q", i, got, aliceCountsNot)
		}
	}
}

// listFails is a store whose listing of open questions fails while fail
// is above zero.
type listFails struct {
	core.Store
	fail int
}

func (s *listFails) ListOpen(ctx context.Context, cursor string, limit int) ([]*core.Question, string, error) {
	if s.fail > 0 {
		s.fail--
		return nil, "", errors.New("the store is away")
	}
	return s.Store.ListOpen(ctx, cursor, limit)
}

// TestASweepTheStoreFailsIsTriedAgainThenDropped: a page the store fails
// is tried again at the next tick, and a sweep failed five times in a
// row is dropped with an error that says what it leaves.
func TestASweepTheStoreFailsIsTriedAgainThenDropped(t *testing.T) {
	st := &listFails{Store: coretest.OpenStore(t)}
	f := newSweepFixture(t, st, 1)
	st.fail = 1
	f.reload("bob", "carol")
	if _, err := f.svc.Tick(t.Context()); err == nil {
		t.Fatal("a tick whose sweep the store failed: no error")
	}
	if rep := f.tick(); rep.Refreshed != 1 {
		t.Errorf("the tick after: %+v, want the card edited", rep)
	}

	st.fail = 5
	f.reload("alice", "bob", "carol")
	for i := range 5 {
		rep, err := f.svc.Tick(t.Context())
		if err == nil || rep.RefreshCut != (i == 4) {
			t.Fatalf("tick %d: %+v, %v", i+1, rep, err)
		}
		if i == 4 && !strings.Contains(err.Error(), "show the reload's tally at their next edit") {
			t.Errorf("the error that drops the sweep: %v", err)
		}
	}
	if rep := f.tick(); rep != (core.TickReport{}) {
		t.Errorf("after the sweep was dropped: %+v", rep)
	}
}
