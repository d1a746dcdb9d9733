package telegram

import (
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// rows is a card's keyboard as the labels of each row.
func rows(t *testing.T, q *core.Question) [][]string {
	t.Helper()
	c := cardOf(q)
	kb, err := keyboard(c, tooLongToEdit(c))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, row := range kb.InlineKeyboard {
		var r []string
		for _, b := range row {
			r = append(r, b.Text)
		}
		out = append(out, r)
	}
	return out
}

// TestOptionButtonsTellApart: two options whose titles differ only past
// where a label is cut get buttons that read differently, each numbered
// as its option is on the card. Before, both read the same cut title.
func TestOptionButtonsTellApart(t *testing.T) {
	q := decision()
	q.Options[0].Recommended = false
	q.Options[0].Title = "Roll back payments-api, billing-worker and ledger-sync to v2.3.1, keeping the new schema"
	q.Options[1].Title = "Roll back payments-api, billing-worker and ledger-sync to v2.3.1, reverting the schema"
	seen := map[string]bool{}
	for i, r := range rows(t, q)[:2] {
		if len(r) != 1 || !strings.HasPrefix(r[0], fmt.Sprintf("%d. Roll back", i+1)) || seen[r[0]] {
			t.Errorf("option %d's row reads %q", i+1, r)
		}
		seen[r[0]] = true
	}
}

// TestStandingButtonsKeepTheirHours: a standing approval's buttons say
// whole what they grant, the hours included, each on a row of its own.
// Before, "…for this agent f…" lost the hours, in a row of four buttons
// a phone shows a few letters of each.
func TestStandingButtonsKeepTheirHours(t *testing.T) {
	q := approval()
	q.Call.Standing = &core.StandingOffer{Hours: core.MaxStandingHours}
	got := rows(t, q)
	want := fmt.Sprintf("%d hours", core.MaxStandingHours)
	if len(got) != 4 || len(got[0]) != 2 || len(got[1]) != 1 || len(got[2]) != 1 ||
		strings.Contains(got[1][0], ellipsis) || !strings.HasSuffix(got[2][0], want) {
		t.Fatalf("rows %q, want Approve and Deny, then each standing approval whole on its own row (the second ending %q), then Decline", got, want)
	}
}
