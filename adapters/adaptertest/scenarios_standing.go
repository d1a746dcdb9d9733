package adaptertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// 12. standing approval from a card: "Approve, and don't ask again for
// this tool in this run" approves; the next ask for that tool in the run
// closes at once, without a card, saying a standing approval by that
// person covered it; a hard-to-reverse one is asked as usual; the run's
// end ends the standing approval.
func standingFromCard(t *testing.T, w *world) {
	write := func(path string, rev core.Reversibility) client.AskRequest {
		return client.AskRequest{Kind: core.KindApproval, Question: "Write " + path + "?", ToolCallID: "toolu_" + strings.Trim(path, "/"),
			Reversibility: rev, Tool: "write_file", Arguments: json.RawMessage(`{"path":"` + path + `"}`)}
	}
	q := w.ask(write("/a", core.Reversible))
	waiting := w.wait(q.ID)
	c := w.card(q.ID)
	b := w.button(c, core.RefStanding, -1, 0)
	if b.Label != card.LabelStandingRun {
		t.Fatalf("the standing button says %q", b.Label)
	}
	u := w.d.Allowed()
	w.d.Click(t, u, c, b)
	if res := w.woken(waiting); res.Resume == nil || !*res.Resume.Structured.Approved {
		t.Fatalf("the granting approve woke the agent with %+v", res)
	}
	// The grant is named after whoever approved, as cards name them: the
	// configured name of the person where the route knows people.
	granter := core.DeciderLabel(w.get(q.ID).Resolution.Decider)
	next := w.ask(write("/b", core.Reversible))
	if next.Resolution == nil || next.Resolution.StandingID == "" {
		t.Fatalf("the agent's view of the covered ask names no standing approval: %+v", next.Resolution)
	}
	r := w.get(next.ID).Resolution
	if next.State != core.StateAnswered || r == nil || r.Standing == nil || !strings.Contains(r.Decider.Name, "standing approval by "+granter+" at") {
		t.Fatalf("the next ask came back %s with %+v", next.State, r)
	}
	if kinds := w.events(next.ID); count(kinds, core.EventNotified) != 0 || len(w.get(next.ID).Messages) != 0 {
		t.Fatalf("a covered ask was posted: %v", kinds)
	}
	res := w.woken(w.wait(next.ID))
	if !strings.Contains(res.Resume.Text, "A standing approval answered this question at once") {
		t.Fatalf("the covered ask's resume:\n%s", res.Resume.Text)
	}
	hard := w.ask(write("/c", core.HardToReverse))
	if !hard.Open() {
		t.Fatalf("a hard-to-reverse ask was %s", hard.State)
	}
	w.card(hard.ID) // and its card is posted
	list, err := w.ops.Standing(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("standing approvals: %+v, %v", list, err)
	}
	if _, err := w.agent.EndRun(t.Context(), "run-1"); err != nil {
		t.Fatal(err)
	}
	if list, err := w.ops.Standing(t.Context()); err != nil || len(list) != 0 {
		t.Fatalf("after the run ended: %+v, %v", list, err)
	}
}
