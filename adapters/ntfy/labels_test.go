package ntfy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestButtonsThatReadAlikeOpenTheirPage: a notification never has two
// one-tap buttons that read the same. A decision's buttons are numbered,
// so options whose titles differ past ntfy's 40 characters stay apart
// and answer from the lock screen; two choices whose labels still read
// the same once cut open their pages, which show the choice whole before
// recording it. Before, two identical one-tap buttons each recorded a
// different choice.
func TestButtonsThatReadAlikeOpenTheirPage(t *testing.T) {
	const keep, revert = "Roll back payments-api and billing-worker to v2.3.1, keeping the new schema",
		"Roll back payments-api and billing-worker to v2.3.1, reverting the schema"
	dec := &core.Question{ID: "b234567abcdefghij", Kind: core.KindDecision, State: core.StateOpen, Text: "How to roll back?",
		Reversibility: core.HardToReverse, Deadline: time.Now().Add(time.Hour), Options: []core.Option{
			{ID: "keep", Title: keep}, {ID: "revert", Title: revert}}}
	form := &core.Question{ID: "b234567abcdefghij", Kind: core.KindForm, State: core.StateOpen, Text: "Roll back plan",
		Reversibility: core.HardToReverse, Deadline: time.Now().Add(time.Hour), Items: []core.FormItem{
			{ID: "how", Question: "How to roll back?", Options: []core.FormOption{{ID: "keep", Label: keep}, {ID: "revert", Label: revert}}}}}
	for name, c := range map[string]struct {
		q      *core.Question
		action string
	}{
		"decision": {dec, "http"},
		"form":     {form, "view"},
	} {
		t.Run(name, func(t *testing.T) {
			p := render(t, c.q)
			seen := map[string]bool{}
			for i, a := range p.Actions[:2] {
				if !strings.Contains(a.Label, "Roll back") || a.Action != c.action {
					t.Errorf("button %d: %q (%s), want a %s action", i+1, a.Label, a.Action, c.action)
				}
				if a.Action == "http" && seen[a.Label] {
					t.Errorf("two one-tap buttons read %q", a.Label)
				}
				seen[a.Label] = true
			}
		})
	}
}

// TestAnswerButtonSaysItOpensThePage: a clarification's button opens the
// answer's page in the browser (a view action), as ntfy takes no reply
// to a notification; its label says so, the words email uses, rather
// than the chat surfaces' "Reply to answer".
func TestAnswerButtonSaysItOpensThePage(t *testing.T) {
	q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindClarification, State: core.StateOpen, Text: "Which region?",
		Reversibility: core.Reversible, Deadline: time.Now().Add(time.Hour)}
	p := render(t, q)
	if len(p.Actions) == 0 {
		t.Fatal("no buttons")
	}
	if a := p.Actions[0]; a.Label != card.LabelAnswerOnPage || a.Action != "view" {
		t.Errorf("the answer button is %q (%s), want %q (view)", a.Label, a.Action, card.LabelAnswerOnPage)
	}
	for _, a := range p.Actions {
		if a.Label == card.LabelAnswer {
			t.Errorf("a button reads %q, which no reply to a notification does", a.Label)
		}
	}
}

// TestDigestSaysItsCountsAreFloors: a digest whose lists core stopped at
// its cap says "N or more" and that more may be left out; before, it gave
// the floor as the count.
func TestDigestSaysItsCountsAreFloors(t *testing.T) {
	adaptertest.CheckCappedDigest(t, ntfy.RenderDigest(adaptertest.CappedDigest(), "t").Message)
}
