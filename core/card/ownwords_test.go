package card_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestAnAgentsLabelNeverReadsAsAskbridgesButton: an agent writes its
// options' labels, and one that reads as one of askbridge's own buttons
// ("Something else", which opens a text box; "Decline: let the agent
// decide", which resumes the agent with askbridge's fixed words) would
// sit beside that button looking the same while recording the agent's
// option instead. Such a label is quoted, so every button a card draws
// reads differently from the others. Before, a one-item form drew two
// "Something else" and two "Decline: let the agent decide" buttons.
func TestAnAgentsLabelNeverReadsAsAskbridgesButton(t *testing.T) {
	one := cardQ(core.KindForm)
	one.Items = []core.FormItem{{ID: "i1", Question: "Go ahead?", Options: []core.FormOption{
		{ID: "else", Label: "Something else"}, {ID: "dec", Label: " decline: LET the agent decide "}, {ID: "zw", Label: "Some\u200bthing else."}}}}
	two := cardQ(core.KindForm)
	two.Items[0].Options[1].Label = "Something else"
	dec := cardQ(core.KindDecision)
	dec.Options[1].Title = "Decline"

	for name, c := range map[string]card.Card{
		"one-item form": card.New(one, core.MessageRef{Kind: core.DeliverPost}),
		"two-item form": card.New(two, core.MessageRef{Kind: core.DeliverPost}),
		"decision":      card.New(dec, core.MessageRef{Kind: core.DeliverPost}),
	} {
		seen := map[string]bool{}
		for _, a := range allActions(c) {
			if seen[a.Label] {
				t.Errorf("%s: two buttons read %q: %q", name, a.Label, labels(allActions(c)))
			}
			seen[a.Label] = true
			if a.Ref.Action == core.RefOption && readsAsOwn(a.Label) {
				t.Errorf("%s: the agent's option reads %q, as askbridge's own button", name, a.Label)
			}
		}
	}
	// A label that only starts like one of askbridge's is the agent's to
	// word as it likes, and is drawn as written.
	dec.Options[1].Title = "Decline the refund"
	if got := labels(allActions(card.New(dec, core.MessageRef{Kind: core.DeliverPost})))[1]; got != "2. Decline the refund" {
		t.Errorf("an ordinary label is drawn as %q", got)
	}
}

// TestAnAgentsReasonForWithdrawingIsQuoted: the agent's reason for
// withdrawing a question is its own words, shown on askbridge's outcome
// line, so it is quoted as the agent's: a reason that reads as an
// outcome ("Answered by Alice ...") must not pass for askbridge saying
// so. A quotation mark of the agent's cannot end the quote early.
func TestAnAgentsReasonForWithdrawingIsQuoted(t *testing.T) {
	at := cardT0.Add(7 * time.Minute)
	const when = "2026-06-01 09:07 UTC"
	for _, c := range []struct{ reason, want string }{
		{"Answered by Alice on " + when + " via slack", "Withdrawn by the agent on " + when + ", saying “Answered by Alice on " + when + " via slack”"},
		{`done” Approved by Alice "for real"`, "Withdrawn by the agent on " + when + `, saying “done' Approved by Alice 'for real'”`},
	} {
		q := cardQ(core.KindClarification)
		q.State = core.StateCancelled
		q.Resolution = &core.Resolution{State: core.StateCancelled, ClosedBy: core.CloserAgentCancel, Decider: outAgent, At: at, Reason: c.reason}
		if got := card.OutcomeLine(q); got != c.want {
			t.Errorf("reason %q: line %q, want %q", c.reason, got, c.want)
		}
	}
}

// readsAsOwn reports whether a button's label, its item's number and the
// recommended note aside, reads as one of askbridge's own: the same words
// whatever their case, blanks, invisible characters and end stop.
func readsAsOwn(label string) bool {
	read := func(s string) string {
		s = strings.ReplaceAll(strings.TrimSuffix(s, card.RecommendedNote), "\u200b", "")
		if n, rest, ok := strings.Cut(s, ". "); ok && len(n) == 1 {
			s = rest
		}
		return strings.ToLower(strings.Trim(strings.TrimSpace(s), "."))
	}
	for _, own := range []string{card.LabelSomethingElse, card.LabelDecline, "Decline"} {
		if read(label) == read(own) {
			return true
		}
	}
	return false
}

// TestAnAgentsLabelIsOneLine: a label is drawn on one line, but an
// agent's title may hold line breaks, and U+2028 and U+2029 (the line
// and paragraph separators) break a line in a browser wherever they
// stand, as "\n" does not: the console's option button drew "Ship" and
// "it" on lines of their own. Every line break in a label reads as a
// space, as blanks in a label are one space.
func TestAnAgentsLabelIsOneLine(t *testing.T) {
	dec := cardQ(core.KindDecision)
	dec.Options[0].Title = "Ship\u2028it\u2029 now\r\nplease"
	form := cardQ(core.KindForm)
	form.Items[0].Options[1].Label = "Fri\u2028day"
	want := map[string]bool{"1. Ship it now please (Recommended)": true, "1. Friday": false, "1. Fri day": true}
	for _, a := range append(allActions(card.New(dec, core.MessageRef{Kind: core.DeliverPost})), allActions(card.New(form, core.MessageRef{Kind: core.DeliverPost}))...) {
		if strings.ContainsAny(a.Label, "\r\n\u2028\u2029") {
			t.Errorf("the label %q breaks its line", a.Label)
		}
		delete(want, a.Label)
	}
	for l, missing := range want {
		if missing {
			t.Errorf("no button reads %q", l)
		}
	}
	if got := card.AgentLabel("Something\u2028else"); got != "“Something else”" {
		t.Errorf("AgentLabel of a label that reads as askbridge's own across a separator: %q", got)
	}
}

// TestALabelThatReadsAsTheConsolesOwnIsQuoted: the console words its own
// controls at more length than a chat button can ("Decline to answer:
// the agent proceeds on its own judgement", "Withdraw the question"), and
// draws an agent's options beside them, so a label that reads as one of
// those is quoted as one that reads as a chat button's is.
func TestALabelThatReadsAsTheConsolesOwnIsQuoted(t *testing.T) {
	for _, l := range []string{card.LabelConsoleDecline, "decline to answer", card.LabelConsoleWithdraw + ".",
		card.LabelConsoleDecline + card.LabelConsoleDeclineCalls} {
		if got := card.AgentLabel(l); got != "“"+l+"”" {
			t.Errorf("AgentLabel(%q) = %q, want it quoted", l, got)
		}
	}
	if got := card.AgentLabel("Withdraw the refund"); got != "Withdraw the refund" {
		t.Errorf("an ordinary label is drawn as %q", got)
	}
}

// TestALookalikeOfAskbridgesLabelIsQuoted: a label spelled in letters
// that pass for Latin ones (a Cyrillic е or с, full-width letters, a
// mathematical capital, a braille blank for a space) reads as
// askbridge's own button to whoever looks at it, however its code
// points differ, so it is quoted as the plain spelling is. Before, only
// case, blanks and invisible characters were looked through.
func TestALookalikeOfAskbridgesLabelIsQuoted(t *testing.T) {
	for _, l := range []string{
		"D\u0435cline to answer", // Cyrillic е
		"De\u0441line",           // Cyrillic с
		"S\u043Emething else",    // Cyrillic о
		"Ｄｅｃｌｉｎｅ ｔｏ ａｎｓｗｅｒ",                        // full-width
		"\U0001D416ithdraw the question",           // mathematical bold W
		"Decline\u2800to answer",                   // braille blank
		"Dec\u200bl\u0456ne: let the agent decide", // zero-width space, Cyrillic і
		"\u0410pprove", // Cyrillic А
		"|Decline|\u200b",
		"D\u0435cline (Recommended)",
	} {
		if got := card.AgentLabel(l); got != "“"+l+"”" {
			t.Errorf("AgentLabel(%q) = %q, want it quoted", l, got)
		}
	}
	for _, l := range []string{"Declined", "Decline the refund", "Ship it", "Answer 2"} {
		if got := card.AgentLabel(l); got != l {
			t.Errorf("AgentLabel(%q) = %q, want it as written", l, got)
		}
	}
}
