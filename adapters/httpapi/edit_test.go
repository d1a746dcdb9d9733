package httpapi_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestEditBeforeApproving: an operator approves with edited arguments
// over the API; the agent's wait carries exactly those, with both hashes,
// and a key that is not editable is refused by name.
func TestEditBeforeApproving(t *testing.T) {
	e := newEnv(t)
	agent := e.as(agentA)
	q, err := agent.Ask(e.ctx(), client.AskRequest{Kind: core.KindApproval, RunID: "run-1", ToolCallID: nextCall(),
		Question: "Move the file?", Reversibility: core.Reversible, Tool: "mv",
		Arguments: json.RawMessage(`{"from":"a.txt","to":"b.txt"}`), Editable: &core.Editable{Keys: []string{"to"}}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Call.Editable == nil || q.Call.Editable.Keys[0] != "to" {
		t.Fatalf("the ask kept editable %+v", q.Call.Editable)
	}
	ops := e.as(operator)
	_, err = ops.Answer(e.ctx(), q.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption,
		Arguments: json.RawMessage(`{"from":"/etc/passwd","to":"b.txt"}`)})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, `"from" may not be changed`) {
		t.Fatalf("edit of a fixed key: %v", err)
	}
	if _, err := ops.Answer(e.ctx(), q.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption,
		Arguments: json.RawMessage(`{"from":"a.txt","to":"archive/b.txt"}`)}); err != nil {
		t.Fatal(err)
	}
	res, err := agent.WaitOnce(e.ctx(), q.ID, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Resume.Structured
	want := `{"from":"a.txt","to":"archive/b.txt"}`
	if !st.Edited || string(st.ApprovedArguments) != want || st.AskedArgumentsSHA256 != q.Call.ArgumentsSHA256 {
		t.Fatalf("resume data %+v, want the approved arguments %s", st, want)
	}
	if sum, _, _ := core.HashArguments(json.RawMessage(want)); st.ArgumentsSHA256 != sum {
		t.Fatalf("resume hash %s, want the approved arguments' %s", st.ArgumentsSHA256, sum)
	}
	// The question an agent reads keeps the hashes and leaves the
	// person's writing (the arguments, and the keys they touched) to the
	// fenced resume.
	if ed := res.Question.Resolution.Edit; ed == nil || ed.ArgumentsSHA256 != st.ArgumentsSHA256 || ed.AskedArgumentsSHA256 != q.Call.ArgumentsSHA256 {
		t.Fatalf("the agent's question shows the edit as %+v", ed)
	}
}
