package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestEscalationReachesTheEscalationRoutesPeople: an escalation sends the
// escalation route's people who asked for direct messages their card, as
// an ask does; a route of such people alone has no room, and before, its
// escalation told nobody. And a question whose escalation route a reload
// removed times out at its deadline, rather than being "escalated" to no
// route and left open another timeout.
func TestEscalationReachesTheEscalationRoutesPeople(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	cfg := func(routes map[string]core.Route) core.Config {
		return core.Config{ActorKey: []byte("k"), Routes: routes,
			People: map[string]core.Person{"bob": {IDs: map[core.Surface][]string{core.SurfaceTelegram: {"2002"}}, DM: true}}}
	}
	deploy := core.Route{Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, EscalateTo: "oncall"}
	svc, err := core.New(st, cfg(map[string]core.Route{"deploy": deploy, "oncall": {People: []string{"person:bob"}}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	ask := func() *core.Question {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
			Reversibility: core.Reversible, Route: "deploy", Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	first := ask()
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	ds, err := st.Claim(ctx, core.SurfaceTelegram, "check", 100, time.Hour, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Room != core.DMRoom("2002") || ds[0].Kind != core.DeliverEscalate || ds[0].QuestionID != first.ID {
		t.Errorf("the escalation's deliveries on Telegram: %+v, want bob's direct message", ds)
	}

	second := ask()
	deploy.EscalateTo = ""
	if err := svc.Reconfigure(cfg(map[string]core.Route{"deploy": deploy})); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 0 {
		t.Fatalf("tick after oncall was removed: %+v, %v", rep, err)
	}
	if q, err := svc.Get(ctx, second.ID); err != nil || q.State != core.StateTimedOut {
		t.Fatalf("the question whose escalation route is gone: %+v, %v; want it timed out", q, err)
	}
}

// postCounter is a Telegram courier that counts the cards it posts.
type postCounter struct{ posts *int }

func (postCounter) Surface() core.Surface { return core.SurfaceTelegram }
func (c postCounter) Post(_ context.Context, _ *core.Question, card core.MessageRef) (core.MessageRef, error) {
	*c.posts++
	card.ID = "1"
	return card, nil
}
func (postCounter) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (postCounter) Remind(context.Context, *core.Question, string) error          { return nil }
func (postCounter) Digest(context.Context, core.Digest, string) error             { return nil }

// TestEscalationOfAnAnsweredQuestionIsNotPosted: an escalation's card
// that waited (on a budget, a back-off, a backlog) while the question
// was answered is not posted: the escalation route's people are not
// paged, by direct message too, about a question already answered, as a
// reminder of one is not sent.
func TestEscalationOfAnAnsweredQuestionIsNotPosted(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc, err := core.New(st, core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{
		"deploy": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, EscalateTo: "oncall"},
		"oncall": {Rooms: []core.Room{{Surface: core.SurfaceTelegram, ID: "-100"}}}}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "which?",
		Reversibility: core.Reversible, Route: "deploy", Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	ds, err := st.Claim(ctx, core.SurfaceTelegram, "check", 100, time.Hour, 0)
	if err != nil || len(ds) != 1 || ds[0].Kind != core.DeliverEscalate {
		t.Fatalf("the escalation's deliveries: %+v, %v", ds, err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	posts := 0
	if err := svc.DeliverOne(ctx, postCounter{&posts}, ds[0], nil); err != nil || posts != 0 {
		t.Fatalf("the escalation after the answer: %d posted, %v; want none", posts, err)
	}
}

// TestAnEscalationDeciderGrantsNoStandingApproval: someone let in by an
// escalation may approve the escalated call, but not grant a standing
// approval, which would decide the escalated route's later calls, where
// they may not decide; the refusal records nothing, and the same approve
// without it closes the question. Before, boss on oncall could approve
// deploy's later calls for the whole run.
func TestAnEscalationDeciderGrantsNoStandingApproval(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{
		"deploy": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, EscalateTo: "oncall"},
		"oncall": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"boss"}}},
	}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Restart?", Reversibility: core.Reversible,
		Tool: "restart", Arguments: []byte(`{"svc":"web"}`), Route: "deploy", Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	boss := core.Decider{Surface: core.SurfaceAPI, ID: "boss"}
	in := core.AnswerInput{QuestionID: q.ID, Decider: boss, OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}}
	if o, err := svc.Answer(ctx, in); core.ErrorCode(err) != core.CodeForbidden || o.Standing != nil {
		t.Fatalf("boss's standing approval on deploy: %+v, %v; want it refused", o, err)
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
		t.Fatalf("after the refusal: %+v, %v", got, err)
	}
	in.Standing = nil
	if o, err := svc.Answer(ctx, in); err != nil || !o.Closed {
		t.Fatalf("boss's approve: %+v, %v", o, err)
	}
	if sts, err := svc.ListStandings(ctx); err != nil || len(sts) != 0 {
		t.Fatalf("standing approvals %+v, %v; want none", sts, err)
	}
}
