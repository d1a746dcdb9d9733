package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAgentCancelReasonIsOneLineOfPlainText: every card shows an agent's
// cancel reason on its outcome line, so a control character, a bidi
// override or a line break in it could forge what follows ("Answered by
// alice"). It is refused as the ask's own text is, naming the field, and
// the question stays open; a plain reason is taken.
func TestAgentCancelReasonIsOneLineOfPlainText(t *testing.T) {
	ctx := t.Context()
	svc, _ := coretest.Open(t, coretest.Options{})
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "r1", Text: "Which?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	agent := core.Decider{Surface: core.SurfaceAgent, ID: "agent-a"}
	for _, reason := range []string{
		"done\u202e",
		"done\x1b[2J",
		"done\nAnswered by alice on slack",
		"done\r\nAnswered by alice on slack",
		"done\u2028Answered by alice on slack",
	} {
		_, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: agent, Owner: "agent-a", Reason: reason})
		if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "reason") {
			t.Errorf("cancel reason %q: %v, want invalid naming the reason", reason, err)
		}
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
		t.Fatalf("after the refused cancels the question is %+v, %v; want it open", got, err)
	}
	if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: q.ID, By: agent, Owner: "agent-a", Reason: "found it in the docs\t(v2)"}); err != nil {
		t.Fatalf("a plain reason: %v", err)
	}
}
