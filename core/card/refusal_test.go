package card_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestARefusalOfTheActSaysWhyNotWho: boss, whom only deploy's escalation
// lets in, may approve an escalated call but not grant deploy a standing
// approval; the note for that refusal (from the act and from ActRefusal
// alike) is core's own reason, not "You are not one of the people who
// may answer", which is false of him: he may, and the plain approve he
// then makes counts. Carol, whom no route lets in, is still told she is
// not one of them. Before, both were told the same.
func TestARefusalOfTheActSaysWhyNotWho(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"deploy": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, EscalateTo: "oncall", StandingHours: 8},
		"oncall": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"boss"}}},
	}})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Route: "deploy", Agent: "bot", RunID: "r", Text: "Restart?",
		Tool: "restart", Arguments: []byte(`{"svc":"web"}`), Reversibility: core.Reversible, Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(ctx); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	if q, err = svc.Get(ctx, q.ID); err != nil {
		t.Fatal(err)
	}
	boss := core.Decider{Surface: core.SurfaceAPI, ID: "boss"}
	carol := core.Decider{Surface: core.SurfaceAPI, ID: "carol"}
	standing := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefStanding}
	act := func(d core.Decider) error {
		in, err := core.AnswerFor(q, standing, d, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Answer(ctx, in)
		if core.ErrorCode(err) != core.CodeForbidden {
			t.Fatalf("%s's standing approval: %v, want a refusal", d.ID, err)
		}
		return err
	}
	const notOne = "You are not one of the people who may answer this question."
	for name, err := range map[string]error{"the act": act(boss), "ActRefusal": svc.ActRefusal(q, standing, boss)} {
		note := card.RefusalNote(err)
		if strings.Contains(note, "not one of the people") || !strings.HasPrefix(note, "Only route deploy's own deciders grant its standing approvals") ||
			!strings.HasSuffix(note, ". Nothing was recorded.") {
			t.Errorf("boss is told, of %s, %q", name, note)
		}
	}
	for name, err := range map[string]error{"the act": act(carol), "ActRefusal": svc.ActRefusal(q, standing, carol)} {
		if note := card.RefusalNote(err); !strings.HasPrefix(note, notOne) {
			t.Errorf("carol is told, of %s, %q", name, note)
		}
	}
	// What boss's note says is true: he may approve without one.
	in, err := core.AnswerFor(q, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}, boss, "")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := svc.Answer(ctx, in); err != nil || !o.Closed {
		t.Fatalf("boss's approve: %+v, %v", o, err)
	}
}
