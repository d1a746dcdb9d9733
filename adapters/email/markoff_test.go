package email_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestPlainTextMarksOffTheirText: in the plain-text part, the agent's
// question, context and sections are quoted ("> "), so a context laid
// out like one of askbridge's action links ("  Approve:" over a URL) does
// not read as one. Before, it stood unmarked above the real links.
func TestPlainTextMarksOffTheirText(t *testing.T) {
	e := newEnv(t)
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop it?", Context: "Fine by ops.\n  Approve:\n    https://askbridge-confirm.evil.example/act/x",
		Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
	m := e.mail(alice, 1)
	if !strings.Contains(m.Text, "> Fine by ops.\n>   Approve:\n>     https://askbridge-confirm.evil.example") {
		t.Fatalf("the context is not marked off:\n%s", m.Text)
	}
}

// evilLink is a link of the agent's own, laid out as one of askbridge's.
const evilLink = "https://askbridge.example.evil/e/act/ABC"

// evilLines is agent text that, unmarked, would read as askbridge's
// decline link, with the footer that vouches for it.
const evilLines = "\n\n  Decline: let the agent decide:\n    " + evilLink + "\n--\nEach link opens a page"

// checkMarkedOff fails unless nothing in m that its text did not make
// can pass for one of its action links or its footer: in the text part,
// every line that is not quoted ("> ", however indented) and starts with
// a URL is one of m's own links, and the only unquoted "--" is the
// footer's; in the HTML part, the only links are m's own.
func checkMarkedOff(t *testing.T, text, html string, links []string) {
	t.Helper()
	own := map[string]bool{}
	for _, u := range links {
		own[u] = true
	}
	var bad []string
	seps := 0
	for i, l := range strings.Split(text, "\n") {
		s := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(s, ">"):
			continue
		case strings.HasPrefix(s, "http") && !own[s]:
			bad = append(bad, fmt.Sprintf("line %d, %q, reads as one of askbridge's links", i+1, l))
		case s == "--":
			if seps++; seps > 1 {
				bad = append(bad, fmt.Sprintf("line %d, %q, reads as the footer's separator", i+1, l))
			}
		}
		if strings.ContainsAny(l, "\r\v\f\u0085\u2028\u2029") {
			bad = append(bad, fmt.Sprintf("line %d, %q, breaks where a mail reader may start a new line", i+1, l))
		}
	}
	if len(bad) > 0 {
		t.Errorf("the text part lets their words pass for askbridge's:\n%s\n\n%s", strings.Join(bad, "\n"), text)
	}
	anchors := strings.Count(html, "<a ")
	if anchors != len(links) || strings.Contains(html, `href="`+evilLink) {
		t.Errorf("the HTML part has %d links, want %d of its own:\n%s", anchors, len(links), html)
	}
	for _, u := range links {
		if !strings.Contains(html, `href="`+strings.ReplaceAll(u, "&", "&amp;")+`"`) {
			t.Errorf("the HTML part lacks its link %s", u)
		}
	}
}

// TestPlainTextMarksOffEveryField: not just the question, context and
// section bodies, but every field an agent writes (an option's title, a
// form item's question, a choice's label and description) is quoted or
// folded onto one line in the plain-text part, so none of it can lay out
// a line that reads as one of askbridge's action links or its footer.
// Before, a form option's description, a decision option's title and an
// item's question went out unmarked, their lines as the agent laid them.
func TestPlainTextMarksOffEveryField(t *testing.T) {
	e := newEnv(t)
	e.deliver()
	e.ask(core.AskInput{Kind: core.KindForm, Text: "Release plan", Items: []core.FormItem{
		{ID: "day", Question: "Which day?" + evilLines, Options: []core.FormOption{
			{ID: "mon", Label: "Monday", Description: "Quiet traffic" + evilLines, Recommended: true},
			{ID: "fri", Label: "Friday" + evilLines}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "s", Label: "Short"}, {ID: "l", Label: "Long"}}}}})
	form := e.mail(alice, 1)
	checkMarkedOff(t, form.Text, form.HTML, form.Links)
	if !strings.Contains(form.Text, "    > Quiet traffic\n    > \n    >   Decline: let the agent decide:\n    >     "+evilLink) {
		t.Errorf("the description is not marked off:\n%s", form.Text)
	}
	e.ask(core.AskInput{Kind: core.KindDecision, Text: "Which database?", Options: []core.Option{
		{ID: "pg", Title: "PostgreSQL" + evilLines, Writeup: "Known.", Recommended: true},
		// A bare carriage return in a title is refused at the ask (core's
		// checkText); a line feed is taken, and marked off here.
		{ID: "ddb", Title: "DynamoDB\n  Decline: let the agent decide:\n    " + evilLink, Writeup: "Scales out."}}})
	decision := e.mail(alice, 2)
	checkMarkedOff(t, decision.Text, decision.HTML, decision.Links)
	if !strings.Contains(decision.Text, "\n1. PostgreSQL Decline: let the agent decide: "+evilLink+" -- Each link opens a page (Recommended)\n") {
		t.Errorf("the option's title is not on one line:\n%s", decision.Text)
	}
	// The real decline link is still found by its label.
	if got := link(t, decision, card.LabelDecline); strings.Contains(got, "evil") {
		t.Fatalf("the decline link is %s", got)
	}
}

// TestRenderMarksOffPeoplesWords: what people wrote (a form item's free
// answer and who gave it, an outcome's choice and reason, names in a
// tally, an agent's reason for withdrawing in the outcome line, whoever
// a reminder waits for) is quoted or folded too, on a card that still
// has links (a form half answered) and on a closed one.
func TestRenderMarksOffPeoplesWords(t *testing.T) {
	evil := "ok" + evilLines
	open := card.Card{Kind: core.KindForm, Heading: "Questions", Text: "Release plan",
		Mentions: []core.Mention{{Name: "Alice" + evilLines}},
		Tally:    &core.Tally{Lines: []string{"Approve: Bob" + evilLines}},
		Sections: []card.Section{
			{Kind: card.SectionItem, Index: 0, Title: "Which day?", Answer: &card.ItemAnswered{Text: evil, Own: true, By: "Bob" + evilLines}},
			{Kind: card.SectionItem, Index: 1, Title: "Notes?", Choices: []card.Choice{{Label: "Short"}},
				Actions: []card.Action{{Label: "Short" + evilLines, Ref: core.Ref{QuestionID: "q1", Item: 1, Action: core.RefOption}}}},
			{Kind: "unknown", Title: "Someday" + evilLines, Body: evil}},
		Actions: []card.Action{{Label: card.LabelDecline, Ref: core.Ref{QuestionID: "q1", Item: -1, Action: core.RefDecline}}}}
	links := email.Links{}
	var urls []string
	for i, a := range actionlink.Actions(open) {
		u := "https://bridge.example.test/email/act/own" + strconv.Itoa(i)
		links[a.Ref], urls = u, append(urls, u)
	}
	m, err := email.RenderCard(open, links)
	if err != nil {
		t.Fatal(err)
	}
	checkMarkedOff(t, m.Text, m.HTML, urls)
	if !strings.Contains(m.Text, "> ok\n> \n>   Decline: let the agent decide:") {
		t.Errorf("the free answer is not marked off:\n%s", m.Text)
	}
	closed := card.Card{Kind: core.KindDecision, Heading: "Decision needed", Text: "Which database?", State: core.StateAnswered,
		Outcome: &card.Outcome{State: core.StateAnswered, Line: "Withdrawn by the agent: " + evil, Label: "Chosen", Choice: evil, Reason: evil}}
	m, err = email.RenderCard(closed, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMarkedOff(t, m.Text, m.HTML, nil)
	for _, want := range []string{"Chosen:\n> ok\n> \n>   Decline:", "Reason:\n> ok\n> \n>   Decline:"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("the text part lacks %q:\n%s", want, m.Text)
		}
	}
}
