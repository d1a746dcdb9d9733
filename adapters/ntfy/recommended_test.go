package ntfy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// render is q's notification as first posted, with its signed links.
func render(t *testing.T, q *core.Question) ntfy.Publication {
	t.Helper()
	signer, _ := actionlink.NewSigner([]byte(key))
	c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
	links, err := signer.Links(q, c, core.SurfaceNtfy, topic, "https://bridge.example.test"+ntfy.ActPath)
	if err != nil {
		t.Fatal(err)
	}
	return ntfy.Render(c, topic, links, "https://bridge.example.test/menu")
}

// TestFormShowsTheRecommendedChoice: a form's choices in the message say
// which one is recommended, and what each means, as every other surface
// does; the recommended one here is on the second item, which has no
// button of its own (three buttons are for the first item's). Before,
// the choices were bare labels: "- Short", "- Long".
func TestFormShowsTheRecommendedChoice(t *testing.T) {
	q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindForm, State: core.StateOpen, Text: "Release plan",
		Reversibility: core.Reversible, Deadline: time.Now().Add(time.Hour), Items: []core.FormItem{
			{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
			{ID: "notes", Question: "Release notes?", Options: []core.FormOption{
				{ID: "short", Label: "Short", Description: "one line per change"},
				{ID: "long", Label: "Long", Description: "with the migration steps\nand rollback", Recommended: true}}},
		}}
	p := render(t, q)
	for _, want := range []string{
		"- Short: one line per change\n",
		"- Long" + card.RecommendedNote + ": with the migration steps and rollback\n",
		"- Monday\n",
	} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("the message lacks %q:\n%s", want, p.Message)
		}
	}
	if n := strings.Count(p.Message, card.RecommendedNote); n != 1 {
		t.Errorf("%d recommended marks, want 1:\n%s", n, p.Message)
	}
}

// TestLongRecommendedTitleKeepsItsMark: a recommended option's button
// keeps "(Recommended)" whole when its title is too long for ntfy's
// label; the title gives way. Before, a 35-character title lost the
// mark: "Move the ledger onto PostgreSQL 17. (Re…".
func TestLongRecommendedTitleKeepsItsMark(t *testing.T) {
	long := "Move the ledger onto PostgreSQL 17."
	if len(long) != 35 {
		t.Fatalf("the title is %d characters", len(long))
	}
	q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindDecision, State: core.StateOpen, Text: "Which database?",
		Reversibility: core.Reversible, Deadline: time.Now().Add(time.Hour), Options: []core.Option{
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out."},
			{ID: "pg", Title: long, Writeup: "Known to the team.", Recommended: true}}}
	p := render(t, q)
	if len(p.Actions) < 2 {
		t.Fatalf("buttons %+v", p.Actions)
	}
	if got := p.Actions[0].Label; got != "1. DynamoDB" {
		t.Errorf("the first button reads %q", got)
	}
	got := p.Actions[1].Label
	if !strings.HasSuffix(got, card.RecommendedNote) || !strings.HasPrefix(got, "2. Move the ledger") || len([]rune(got)) > 40 {
		t.Errorf("the recommended button reads %q (%d runes), want its title cut before %q, within 40", got, len([]rune(got)), card.RecommendedNote)
	}
}
