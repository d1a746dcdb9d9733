package discord

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestDenyAllModalSaysHowMany: the modal a batch's "Deny all" opens says
// that it denies every call still undecided, and how many, within
// Discord's 45 characters for a modal's title; a call's own Deny, and a
// single approval's, still deny the one call. Before, "Deny all" opened
// a modal titled "Deny the tool call", as if it denied one.
func TestDenyAllModalSaysHowMany(t *testing.T) {
	title := func(q *core.Question, r core.Ref) string {
		t.Helper()
		m, ok := RenderModal(card.New(q, core.MessageRef{}), r)
		if !ok {
			t.Fatalf("no modal for %+v", r)
		}
		if n := width(m.Data.Title); n > maxModalTitle {
			t.Fatalf("the title %q is %d wide, over Discord's %d", m.Data.Title, n, maxModalTitle)
		}
		return m.Data.Title
	}
	for _, tc := range []struct {
		name    string
		decided int // the first calls, decided already
		want    string
	}{
		{"none decided", 0, "Deny all 20 tool calls"},
		{"some decided", 2, "Deny the 18 undecided tool calls"},
		{"one left", core.MaxBatchCalls - 1, "Deny the last undecided tool call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := shortBatch()
			for i := range tc.decided {
				decideCall(q, i)
			}
			all := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefDeny}
			if got := title(q, all); got != tc.want {
				t.Errorf("Deny all opens %q; want %q", got, tc.want)
			}
			if got := title(q, core.Ref{QuestionID: q.ID, Item: core.MaxBatchCalls - 1, Action: core.RefDeny}); got != "Deny the tool call" {
				t.Errorf("a call's own Deny opens %q", got)
			}
		})
	}
	a := approvalQ()
	if got := title(a, core.Ref{QuestionID: a.ID, Item: -1, Action: core.RefDeny}); got != "Deny the tool call" {
		t.Errorf("an approval's Deny opens %q", got)
	}
}
