package core_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// tallyCards is a Discord channel reduced to the tally each card shows,
// by message id, as the card renders it (core.TallyOf of the question
// handed to Post or Update).
type tallyCards struct {
	discordEditor
	shows map[string]string
	n     int
}

func (c *tallyCards) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.n++
	card.ID = "m" + strconv.Itoa(c.n)
	c.shows[card.ID] = strings.Join(core.TallyOf(q).Lines, "; ")
	return card, nil
}

func (c *tallyCards) Update(_ context.Context, q *core.Question, card core.MessageRef) error {
	c.shows[card.ID] = strings.Join(core.TallyOf(q).Lines, "; ")
	return nil
}

// postedVoters is removedVoterConfig with the route's cards posted in a
// Discord channel.
func postedVoters(members ...string) core.Config {
	cfg := removedVoterConfig(false, members...)
	route := cfg.Routes[core.DefaultRoute]
	route.Rooms = []core.Room{{Surface: core.SurfaceDiscord, ID: "D1"}}
	cfg.Routes = map[string]core.Route{core.DefaultRoute: route}
	return cfg
}

// TestAReloadEditsTheCardsWhoseTallyItChanged: a reload that takes a
// voter off a question's route queues, at the next tick, an edit of its
// card, which then shows the vote no longer counting; a question whose
// tally the reload leaves as it was gets no edit, nor does a reload that
// changes no tally. Before, the card went on showing "1 of 2 approvals:
// alice-tok" until its next edit (a vote, a reminder, a timeout), though
// every read, and the next vote, counted no vote at all.
func TestAReloadEditsTheCardsWhoseTallyItChanged(t *testing.T) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	svc, err := core.New(st, postedVoters("alice", "bob", "carol"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cards := &tallyCards{shows: map[string]string{}}
	// deliver sends what the Discord outbox holds and returns it.
	deliver := func() []core.Delivery {
		t.Helper()
		ds, err := st.Claim(ctx, core.SurfaceDiscord, "c1", 100, time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if err := svc.DeliverOne(ctx, cards, d, nil); err != nil {
				t.Fatalf("%s %s: %v", d.Kind, d.Key, err)
			}
			if err := st.Ack(ctx, core.SurfaceDiscord, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		return ds
	}
	ask := func(tool string) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?",
			Reversibility: core.HardToReverse, Tool: tool, Arguments: []byte(`{"env":"prod"}`)})
		if err != nil || q.Quorum != 2 {
			t.Fatalf("ask: %+v, %v", q, err)
		}
		return q
	}
	voted, untouched := ask("deploy"), ask("rollback")
	if ds := deliver(); len(ds) != 2 {
		t.Fatalf("the asks' posts: %+v", ds)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: voted.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice-tok"},
		OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	deliver()
	card := func(q *core.Question) string {
		t.Helper()
		got, err := svc.Get(ctx, q.ID)
		if err != nil || len(got.Messages) != 1 {
			t.Fatalf("%s's cards: %+v, %v", q.ID, got, err)
		}
		return cards.shows[got.Messages[0].ID]
	}
	if got := card(voted); got != "1 of 2 approvals: alice-tok" {
		t.Fatalf("the card after alice's vote: %q", got)
	}

	if err := svc.Reconfigure(postedVoters("bob", "carol")); err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ds := deliver()
	if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate || ds[0].QuestionID != voted.ID || rep.Refreshed != 1 || rep.RefreshCut {
		t.Fatalf("the tick after the reload: %+v, queued %+v; want one card edit, of %s", rep, ds, voted.ID)
	}
	const want = "0 of 2 approvals; 1 no longer counts, its voter off the route: alice-tok"
	if got := card(voted); got != want {
		t.Errorf("the card after the reload's edit: %q\nwant %q", got, want)
	}
	if got := card(untouched); got != "0 of 2 approvals" {
		t.Errorf("the card of the question without votes: %q", got)
	}

	// The sweep is over; a reload that changes no tally starts one that
	// edits nothing.
	for _, reload := range []bool{false, true} {
		if reload {
			if err := svc.Reconfigure(postedVoters("bob", "carol", "dave")); err != nil {
				t.Fatal(err)
			}
		}
		if rep, err := svc.Tick(ctx); err != nil || rep.Refreshed != 0 {
			t.Errorf("a tick (after a reload: %v): %+v, %v", reload, rep, err)
		}
		if ds := deliver(); len(ds) != 0 {
			t.Errorf("queued (after a reload: %v): %+v", reload, ds)
		}
	}
}

// TestAReloadSaysWhenAQuorumCannotBeReachedOnItsCard: a reload that
// leaves fewer people than a question's quorum has its card say so at
// the next tick, though nobody had voted; before, the card read "0 of 3
// approvals" as if three people could still come.
func TestAReloadSaysWhenAQuorumCannotBeReachedOnItsCard(t *testing.T) {
	ctx := t.Context()
	st := coretest.OpenStore(t)
	svc, err := core.New(st, postedVoters("alice", "bob", "carol"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?", Quorum: 3,
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)}); err != nil {
		t.Fatal(err)
	}
	claim := func() []core.Delivery {
		t.Helper()
		ds, err := st.Claim(ctx, core.SurfaceDiscord, "c1", 100, time.Hour, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	cards := &tallyCards{shows: map[string]string{}}
	if ds := claim(); len(ds) != 1 || svc.DeliverOne(ctx, cards, ds[0], nil) != nil {
		t.Fatalf("the post: %+v", ds)
	}
	if err := svc.Reconfigure(postedVoters("alice", "bob")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	ds := claim()
	if len(ds) != 1 || ds[0].Kind != core.DeliverUpdate {
		t.Fatalf("queued after the reload: %+v; want the card's edit", ds)
	}
	if err := svc.DeliverOne(ctx, cards, ds[0], nil); err != nil {
		t.Fatal(err)
	}
	const want = "0 of 3 approvals; only 2 people may decide it now: a quorum of 3 cannot be reached"
	if got := cards.shows[ds[0].Message.ID]; got != want {
		t.Errorf("the card: %q\nwant %q", got, want)
	}
}
