package app

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
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
