package app

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestShowCommandEscapesStoredIDs: an option id stored before asks
// refused control characters goes into the printed command quoted, with
// its controls escaped, so it cannot move the operator's cursor or
// reverse what follows. Before, single quotes kept ESC as it was.
func TestShowCommandEscapesStoredIDs(t *testing.T) {
	q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindDecision,
		Options: []core.Option{{ID: "ok\x1b[2K\u202e"}, {ID: "plain-id"}}}
	got := commandFor(q, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 0})
	if strings.ContainsFunc(got, core.IsTextControl) || !strings.Contains(got, `--option 'ok\u001b[2K\u202e'`) {
		t.Errorf("the command for a stored id with controls: %q", got)
	}
	if got := commandFor(q, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}); !strings.Contains(got, "--option plain-id ") {
		t.Errorf("the command for a plain id: %q", got)
	}
}

// TestShowSaysWhatTheDeadlineDoes: show words what a question's deadline
// will do as the console does (card.ThenWords over core.AtDeadline).
// Before, it printed the policy's name: "then deny" of a clarification
// nobody would deny, and "then escalate" of a question already
// escalated, whose next deadline closes it.
func TestShowSaysWhatTheDeadlineDoes(t *testing.T) {
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		q    core.Question
		want string
	}{
		{"a clarification that closes", core.Question{Kind: core.KindClarification, OnTimeout: core.OnTimeoutDeny}, "(then it times out)"},
		{"an approval that closes", core.Question{Kind: core.KindApproval, OnTimeout: core.OnTimeoutDeny,
			Call: &core.ToolCall{Tool: "Bash", Arguments: []byte(`{}`)}}, "(then it times out, without the call)"},
		{"one that escalates", core.Question{Kind: core.KindClarification, OnTimeout: core.OnTimeoutEscalate}, "(then it is escalated to more deciders)"},
		{"one escalated already", core.Question{Kind: core.KindClarification, OnTimeout: core.OnTimeoutEscalate, Renotified: 1}, "(then it times out)"},
	} {
		q := c.q
		q.ID, q.Text, q.Route, q.CreatedAt, q.Deadline, q.State = "b234567abcdefghij", "Which region?", "default", at, at.Add(time.Hour), core.StateOpen
		var out strings.Builder
		printCard(&out, &q, card.New(&q, core.MessageRef{Surface: core.SurfaceAPI, Kind: core.DeliverPost}), at)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: show printed\n%s\nwant %q", c.name, out.String(), c.want)
		}
	}
}
