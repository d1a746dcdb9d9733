package app

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAgentViewKeepsWhatIsDecided: the stdio process's question, made
// from the agent's view, knows which of a batch's calls and a form's
// items are decided, so the host's form offers only the rest. Before, it
// dropped the answers, and "Approve every call listed" listed a call chat
// had denied.
func TestAgentViewKeepsWhatIsDecided(t *testing.T) {
	call := func(id string) core.BatchCall {
		return core.BatchCall{ToolCallID: id, ToolCall: core.ToolCall{Tool: "write_file", Arguments: json.RawMessage(`{}`)}}
	}
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindApproval, State: core.StateOpen,
		Calls:   []core.BatchCall{call("c1"), call("c2")},
		Answers: []core.ItemAnswer{{ItemID: "c2", OptionID: core.DenyOption, Text: "no", Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1"}}}}
	got := fromAgentView(client.AgentView(q))
	if left := got.UndecidedCalls(); len(left) != 1 || left[0].ToolCallID != "c1" {
		t.Errorf("undecided calls %+v, want c1 alone", left)
	}
	if a, ok := got.Answered("c2"); !ok || a.Text != "" || a.Decider.ID != "" {
		t.Errorf("the decided call reads %+v, %v: want it answered, without words or who", a, ok)
	}
}
