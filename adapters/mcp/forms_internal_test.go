package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// TestHostFormShowsABatchsCalls: the host's form for a batch shows every
// call its verdict decides, with its arguments, and says the verdict is
// theirs all; a call already decided is not among them. Before, it showed
// none, and "Approve this call" approved every call unseen.
func TestHostFormShowsABatchsCalls(t *testing.T) {
	call := func(id, path string) core.BatchCall {
		return core.BatchCall{ToolCallID: id, ToolCall: core.ToolCall{Tool: "write_file", Arguments: json.RawMessage(`{"path":"` + path + `"}`)}}
	}
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindApproval, Text: "Write these?", State: core.StateOpen,
		Calls:   []core.BatchCall{call("c1", "/etc/passwd"), call("c2", "/tmp/decided")},
		Answers: []core.ItemAnswer{{ItemID: "c2", OptionID: core.ApproveOption}}}
	f := formFor(q)
	if !strings.Contains(f.message, "c1: write_file") || !strings.Contains(f.message, "/etc/passwd") || strings.Contains(f.message, "/tmp/decided") {
		t.Errorf("the form's text:\n%s", f.message)
	}
	b, _ := json.Marshal(f.schema)
	if !strings.Contains(string(b), "Approve every call listed") {
		t.Errorf("the form's verdict: %s", b)
	}
}

// TestGetAnswerWaitIsBounded: wait_seconds is capped at MaxGetAnswerWait
// however large; before, a large enough number wrapped round to a
// negative duration, which waits without bound.
func TestGetAnswerWaitIsBounded(t *testing.T) {
	for seconds, want := range map[int]time.Duration{0: 0, 30: 30 * time.Second, 301: MaxGetAnswerWait, 9_300_000_000: MaxGetAnswerWait} {
		if got := waitOf(seconds); got != want {
			t.Errorf("wait_seconds %d: %s, want %s", seconds, got, want)
		}
	}
}

// doorDown is a backend whose host-door check fails, as the store (or
// the server, over stdio) does for a moment.
type doorDown struct{ Backend }

func (doorDown) HostMayAnswer(context.Context, core.QuestionID) (bool, error) {
	return false, errors.New("doorDown: the store is failing over")
}

// TestTaskOfAParkedQuestionSurvivesTheDoorCheck: a task whose question is
// parked is told as working, waiting on chat, when whether its host may
// answer cannot be told; before, the call that parked it got an error and
// no task id to follow or cancel, and the agent was likely to ask again.
func TestTaskOfAParkedQuestionSurvivesTheDoorCheck(t *testing.T) {
	h := &handler{b: doorDown{}}
	h.opts.Logger = slog.New(slog.DiscardHandler)
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindClarification, Text: "Which?", State: core.StateOpen}
	caps := &mcpsdk.ClientCapabilities{Elicitation: &mcpsdk.ElicitationCapabilities{Form: &mcpsdk.FormElicitationCapabilities{}}}
	task, err := h.taskOf(t.Context(), Status{QuestionID: q.ID, State: q.State, Question: q}, caps)
	if err != nil || task.Status != statusWorking || task.TaskID != string(q.ID) {
		t.Fatalf("the task of a parked question: %+v, %v; want it working", task, err)
	}
}

// TestHostFormLeavesOutAnsweredItems: the host's form for a form whose
// item was answered in chat before the host was asked offers only the
// items still open; before, it offered them all, and a reply that
// answered the taken item was refused whole.
func TestHostFormLeavesOutAnsweredItems(t *testing.T) {
	opts := []core.FormOption{{ID: "o1", Label: "yes"}, {ID: "o2", Label: "no"}}
	q := &core.Question{ID: "aaaaaaaaaaaaaaaaa", Kind: core.KindForm, Text: "Two things", State: core.StateOpen,
		Items:   []core.FormItem{{ID: "q1", Question: "Which logger?", Options: opts}, {ID: "q2", Question: "Package name?", Options: opts}},
		Answers: []core.ItemAnswer{{ItemID: "q1", OptionID: "o1"}}}
	f := formFor(q)
	b, _ := json.Marshal(f.schema)
	if strings.Contains(f.message, "Which logger?") || strings.Contains(string(b), `"q1"`) {
		t.Errorf("the form offers the answered item:\n%s\n%s", f.message, b)
	}
	if !strings.Contains(f.message, "Package name?") || !strings.Contains(string(b), `"q2"`) {
		t.Errorf("the form leaves out the open item:\n%s\n%s", f.message, b)
	}
	in, err := f.answer(map[string]any{"q2": "o2"})
	if err != nil || len(in.Items) != 1 || in.Items[0].ItemID != "q2" {
		t.Errorf("the reply reads as %+v, %v", in, err)
	}
}
