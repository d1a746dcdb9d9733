package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// TestAnswerOutcomeEscapesVotersNames: the line answer prints after a
// vote on a question that needs several people names the voters so far
// (their display names, which they chose on their platform) and, on a
// decision, the options' titles; those go to the terminal with their
// control characters and bidi controls escaped, as show writes them.
// Before, a voter named "\u202eeve" reversed the rest of the line, and
// an ESC in a name stored from a platform reached the terminal as it was.
func TestAnswerOutcomeEscapesVotersNames(t *testing.T) {
	q := &client.Question{State: core.StateOpen,
		Votes: []core.Vote{{Key: "telegram:1", Choice: "blue", Decider: core.Decider{Surface: core.SurfaceTelegram, ID: "1", Name: "\u202eeve\x1b[2J"}}}}
	q.ID, q.Kind, q.Quorum = "b234567abcdefghij", core.KindDecision, 2
	q.Options = []core.Option{{ID: "blue", Title: "Blue\x1b]0;pwned\x07"}, {ID: "green", Title: "Green"}}
	var out bytes.Buffer
	printOutcome(&out, &client.Outcome{Question: q})
	got := out.String()
	if strings.ContainsFunc(strings.TrimSuffix(got, "\n"), core.IsTextControl) ||
		!strings.Contains(got, `1 of 2 for Blue\u001b]0;pwned\u0007: \u202eeve\u001b[2J`) {
		t.Fatalf("printed %q", got)
	}
}
