package teams_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// recorded waits for q's card that the outbox posted into room and
// recorded, and returns it as Teams holds it.
func (e *env) recorded(id core.QuestionID, room string) teamsfake.Message {
	e.t.Helper()
	var found teamsfake.Message
	if !e.fake.Wait(10*time.Second, func() bool {
		for _, r := range e.get(id).Messages {
			for _, m := range e.fake.Messages() {
				if r.Room == room && r.ID == m.ID {
					found = m
					return true
				}
			}
		}
		return false
	}) {
		e.t.Fatalf("no card of %s recorded in %s", id, room)
	}
	return found
}

// posted posts q's card into room as the outbox does, without the
// record the outbox makes once Teams has taken it, and returns it.
func (e *env) posted(id core.QuestionID, room string) teamsfake.Message {
	e.t.Helper()
	ref, err := e.a.Post(e.t.Context(), e.get(id), core.MessageRef{Room: room, Kind: core.DeliverPost})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range e.fake.Messages() {
		if m.ID == ref.ID {
			return m
		}
	}
	e.t.Fatalf("the card posted as %s is not in Teams", ref.ID)
	return teamsfake.Message{}
}

// TestClicksOnTheQuestionsOwnCardsCount: a click on one of the
// question's own cards counts wherever that card is: in the decider's
// personal chat, and on a card Teams shows before its record reaches the
// question (the outbox records a card after Teams took it; a record that
// failed leaves that copy unrecorded for good). Before, the card not yet
// recorded answered "That button is not on this question's card".
func TestClicksOnTheQuestionsOwnCardsCount(t *testing.T) {
	e := newEnv(t)
	approval := func(route string) core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Route: route, Text: "Drop the staging tables?", Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)}
	}
	q := e.ask(approval("alice-dm"))
	dm := e.recorded(q.ID, core.DMRoom(aliceAAD))
	if note := e.execute(alice, dm, action(t, dm, card.LabelApprove)); note != "Recorded: Approved" {
		t.Fatalf("a click on the card in alice's personal chat: told %q", note)
	}
	for _, room := range []string{channel, core.DMRoom(aliceAAD)} {
		q := e.ask(approval("ops"))
		m := e.posted(q.ID, room)
		if note := e.execute(alice, m, action(t, m, card.LabelApprove)); note != "Recorded: Approved" {
			t.Fatalf("a click on a card in %s not recorded yet: told %q", room, note)
		}
	}
}

// ahead is the wall clock run fast by a fixed amount: a server whose
// clock is ahead of Teams'.
type ahead time.Duration

func (a ahead) Now() time.Time { return time.Now().Add(time.Duration(a)) }

// TestFormReplyAfterOwnClickCountsWhateverTheClocks: someone who
// answers a form's first item with a click and then replies in the
// thread answers the next item, even when askbridge's clock runs ahead
// of Teams' (the reply's time, Teams', then reads as earlier than the
// click, askbridge's). Before, such a reply was refused as written for
// the item its own writer had just answered.
func TestFormReplyAfterOwnClickCountsWhateverTheClocks(t *testing.T) {
	e := newEnvWith(t, nil, ahead(time.Minute))
	q := e.ask(releaseForm())
	m := e.card(q.ID, nil)
	if note := e.execute(alice, m, option(q.ID, 0, 0)); !strings.HasPrefix(note, "Recorded") {
		t.Fatalf("alice's click was told %q", note)
	}
	e.deliver(e.fake.ReplyActivity(alice, m.Conversation, "Short, please"))
	if got := e.get(q.ID); got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].Text != "Short, please" {
		t.Fatalf("alice's reply after her click: %s %+v", got.State, got.Answers)
	}
}
