package adaptertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// 13. a batch on one card: one call approved on the card, one denied
// through the API, then "Approve all" on the card for the rest; every
// partial decision shows on the card; the agent gets one result per call,
// bound to its own id, in both shapes.
func batchOnOneCard(t *testing.T, w *world) {
	req := client.AskRequest{Kind: core.KindApproval, Question: "Write these files?", Reversibility: core.Reversible}
	for i := range 3 {
		req.Calls = append(req.Calls, core.CallInput{ToolCallID: fmt.Sprintf("toolu_b%d", i+1), Tool: "write_file",
			Arguments: json.RawMessage(fmt.Sprintf(`{"path":"/srv/f%d"}`, i+1))})
	}
	q := w.ask(req)
	waiting := w.wait(q.ID)
	u := w.d.Allowed()
	c := w.card(q.ID)
	w.d.Click(t, u, c, w.button(c, core.RefApprove, 0, 0))
	c = w.d.Card(t, q.ID, func(c Card) bool { return strings.Contains(c.Text, "Answered 1/3") })
	if _, err := w.ops.Answer(t.Context(), q.ID, client.AnswerRequest{Calls: []core.CallDecision{
		{ToolCallID: q.Calls[1].ToolCallID, OptionID: core.DenyOption, Reason: "not f2"}}}); err != nil {
		t.Fatal(err)
	}
	c = w.d.Card(t, q.ID, func(c Card) bool {
		return strings.Contains(c.Text, "Answered 2/3") && strings.Contains(c.Text, "Denied")
	})
	w.d.Click(t, u, c, w.button(c, core.RefApprove, -1, 0))
	res := w.woken(waiting)
	if res.State != core.StateAnswered || len(res.Calls) != 3 {
		t.Fatalf("the agent woke with %+v", res)
	}
	want := []bool{true, false, true}
	for i, r := range res.Calls {
		id := q.Calls[i].ToolCallID
		if r.ToolCallID != id || r.Anthropic.ToolUseID != id || r.OpenAI.CallID != id {
			t.Fatalf("result %d is bound to %s/%s/%s, want %s", i, r.ToolCallID, r.Anthropic.ToolUseID, r.OpenAI.CallID, id)
		}
		if a := r.Resume.Structured.Approved; a == nil || *a != want[i] {
			t.Fatalf("call %d: approved %v, want %v", i+1, a, want[i])
		}
	}
	w.closedCard(q.ID, "1. write_file: Approved", "2. write_file: Denied", "3. write_file: Approved")
}
