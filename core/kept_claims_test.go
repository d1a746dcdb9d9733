package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestClaimsKeptOfClosedQuestionsAreDropped: the claims a replica keeps
// because it could not give them back (remindScan.kept) are dropped once
// a whole reminder pass finds their question closed, while those of open
// questions stay. Before, nothing dropped them: over a long run with a
// flaky store the map filled with claims of closed questions, and past
// its bound it kept nothing more, so a reminder whose claim was not given
// back was never sent again.
func TestClaimsKeptOfClosedQuestionsAreDropped(t *testing.T) {
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(coretest.OpenStore(t), reloadConfig(map[string]core.Route{"ops": {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"alice"}}, RemindEvery: time.Hour}}), clock)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(text string) *core.Question {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: text,
			Reversibility: core.Reversible, Route: "ops", Timeout: 20 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	closed, open := ask("which one?"), ask("and this?")
	for i := range core.MaxKept - 1 {
		svc.KeepClaim(closed.ID, fmt.Sprintf("away:test%d:%s", i, closed.ID), "owner")
	}
	svc.KeepClaim(open.ID, "away:test:"+string(open.ID), "owner")
	if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: closed.ID, By: core.Decider{Surface: core.SurfaceAPI, ID: "op"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Remind(ctx); err != nil {
		t.Fatal(err)
	}
	if got := svc.KeptClaims(); got != 1 {
		t.Fatalf("after a whole pass, %d claims kept; want only the open question's one", got)
	}
}
