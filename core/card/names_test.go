package card_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/fence"
)

// evilName is a display name as a Telegram or Slack user may set it: a
// right-to-left override and an isolate that would reorder the card's
// words after it, a line break and a line separator that would start a
// line of its own ("Approved by Alice"), and a zero-width space.
const evilName = "Eve\u202e\u2066 \nApproved by\u2028Alice\u2069\u200b"

// hidden reports whether r steers or hides text rather than showing it:
// what no name on a card may hold.
func hidden(r rune) bool { return r != ' ' && (core.IsTextControl(r) || fence.IsInvisible(r)) }

// TestPeoplesNamesAreCleanedOnEveryLine: a person's display name reaches
// the lines askbridge words about a question (the outcome line, a late
// clicker's note, a vote's note, a quorum's tally, who decided a part),
// and those lines are askbridge's own words. Before, the name went in
// as its holder typed it, so a bidi override in it reordered the
// card's words after it and a line break in it started a line that read
// as askbridge's ("Approved by Alice"). Every such line now names the
// person as the agent's resume does (fence.CleanName).
func TestPeoplesNamesAreCleanedOnEveryLine(t *testing.T) {
	eve := core.Decider{Surface: core.SurfaceTelegram, ID: "66", Name: evilName, Person: "eve"}
	clean := fence.CleanName(evilName)
	if clean != "Eve Approved by Alice" {
		t.Fatalf("fence cleans the name to %q", clean)
	}
	at := cardT0.Add(7 * time.Minute)
	closed := func(q *core.Question, st core.State, by core.Closer, d core.Decider) *core.Question {
		q.State = st
		q.Resolution = &core.Resolution{State: st, ClosedBy: by, Decider: d, At: at}
		return q
	}
	vote := func(q *core.Question, choice string) *core.Question {
		q.Quorum = 2
		q.Votes = []core.Vote{{Key: "person:eve", Choice: choice, Decider: eve, At: cardT0.Add(time.Minute)}}
		return q
	}
	part := func(q *core.Question, id, option string) *core.Question {
		q.Answers = append(q.Answers, core.ItemAnswer{ItemID: id, OptionID: option, Decider: eve, At: cardT0.Add(2 * time.Minute)})
		return q
	}
	grant := core.StandingUse{ID: "st-e", GrantedBy: eve, GrantedAt: cardT0.Add(-time.Hour)}
	standing := closed(cardQ(core.KindApproval), core.StateAnswered, core.CloserStanding, eve)
	standing.Resolution.Standing = &grant
	yes := true
	standing.Resolution.Approved = &yes

	for name, q := range map[string]*core.Question{
		"answered":                 closed(cardQ(core.KindClarification), core.StateAnswered, core.CloserPerson, eve),
		"declined":                 closed(cardQ(core.KindDecision), core.StateDeclined, core.CloserDecline, eve),
		"withdrawn by an operator": closed(cardQ(core.KindDecision), core.StateCancelled, core.CloserOperatorCancel, eve),
		"declined after a vote":    closed(vote(cardQ(core.KindApproval), core.ApproveOption), core.StateDeclined, core.CloserDecline, outBob),
		"timed out after a vote":   closed(vote(cardQ(core.KindApproval), core.ApproveOption), core.StateTimedOut, core.CloserTimeout, core.System),
		"timed out after a part":   closed(part(cardQ(core.KindForm), "i1", "mon"), core.StateTimedOut, core.CloserTimeout, core.System),
		"answered item by item":    closed(part(part(cardQ(core.KindForm), "i1", "mon"), "i2", "s"), core.StateAnswered, core.CloserParts, eve),
		"by a standing approval":   standing,
		"open, with a vote":        vote(cardQ(core.KindApproval), core.ApproveOption),
		"open, with a part":        part(cardQ(core.KindForm), "i1", "mon"),
	} {
		var lines []string
		c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
		if o := c.Outcome; o != nil {
			lines = append(lines, o.Line, o.By, card.OutcomeLine(q), card.RefusalNote(&core.ClosedError{Question: q}))
		}
		if c.Tally != nil {
			lines = append(lines, c.Tally.Lines...)
		}
		if tl := card.TallyOf(q); tl != nil {
			lines = append(lines, tl.Lines...)
		}
		for _, s := range c.Sections {
			if s.Answer != nil {
				lines = append(lines, s.Answer.By)
			}
		}
		if q.Open() {
			lines = append(lines, card.RecordedNote(q, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}))
			if note, ok := card.PartDoneNote(q, core.Ref{QuestionID: q.ID, Item: 0, Action: core.RefOption}); ok {
				lines = append(lines, note)
			}
		}
		if d, ok := card.ClosingPerson(q); ok {
			lines = append(lines, card.PersonName(d))
		}
		named := false
		for _, l := range lines {
			if strings.ContainsFunc(l, hidden) {
				t.Errorf("%s: a line holds the name as typed: %q", name, l)
			}
			named = named || strings.Contains(l, clean)
		}
		if !named {
			t.Errorf("%s: no line names %q: %q", name, clean, lines)
		}
	}
}

// TestPersonNameIsTheCardsName: the console isolates each name it finds
// in the card's lines, so the name it looks for (PersonName) is the one
// the lines hold; names that need no cleaning, and the ones askbridge
// words itself, are as core words them.
func TestPersonNameIsTheCardsName(t *testing.T) {
	eve := core.Decider{Surface: core.SurfaceSlack, ID: "U6", Name: evilName}
	q := cardQ(core.KindClarification)
	q.State = core.StateAnswered
	q.Resolution = &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPerson, Decider: eve, At: cardT0}
	if line, name := card.OutcomeLine(q), card.PersonName(eve); !strings.HasPrefix(line, "Answered by "+name+" on ") {
		t.Errorf("the line %q does not hold PersonName's %q", line, name)
	}
	for _, d := range []core.Decider{outAlice, core.System, {Surface: core.SurfaceEmail, ID: "a@example.com"}, {Surface: core.SurfaceAPI, ID: "ops"}} {
		if got, want := card.PersonName(d), core.DeciderLabel(d); got != want {
			t.Errorf("%+v: PersonName %q, core's label %q", d, got, want)
		}
	}
}
