package teams_test

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestEditedAnswerIsToldItStands: a thread reply recorded as the answer
// stays the answer; its writer editing or deleting it is told so,
// privately, once per edit, and the answer does not change. An edit of a
// reply that answered nothing, or a deletion by someone else, is told
// nothing. Before, Teams' edit and deletion were dropped unread: the
// writer saw their new words in the thread and believed the agent had
// them.
func TestEditedAnswerIsToldItStands(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	reply := e.fake.ReplyActivity(alice, m.Conversation, "eu-west-1")
	e.deliver(reply)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply: %s %+v", got.State, got.Resolution)
	}
	id := reply["id"].(string)
	alicesChat := teamsfake.PersonalChat(alice.ID)

	edit := e.fake.EditActivity(alice, m.Conversation, id, "us-east-1")
	e.deliver(edit)
	if !e.toldNow(alice, card.EditedAnswerNote) {
		t.Fatalf("the writer of the edited answer was told nothing (%d notes in their chat)", e.notesIn(alicesChat))
	}
	e.deliver(edit) // the Bot Connector's copy of the same edit
	if n := e.notesIn(alicesChat); n != 1 {
		t.Fatalf("one edit told %d times", n)
	}
	// Someone else's deletion of it: its writer is not who Teams names.
	e.deliver(e.fake.SoftDeleteActivity(bob, m.Conversation, id))
	e.deliver(e.fake.SoftDeleteActivity(alice, m.Conversation, id))
	if !e.toldNow(alice, card.DeletedAnswerNote) {
		t.Fatalf("the writer of the deleted answer was told nothing (%d notes in their chat)", e.notesIn(alicesChat))
	}
	if got := e.get(q.ID); got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the answer changed: %+v", got.Resolution)
	}

	// Talk in a thread that answered nothing (an approval's), edited.
	appr := e.card(e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)}).ID, nil)
	talk := e.fake.ReplyActivity(bob, appr.Conversation, "looks fine")
	e.deliver(talk)
	e.deliver(e.fake.EditActivity(bob, appr.Conversation, talk["id"].(string), "looks fine to me"))
	if n := e.notesIn(teamsfake.PersonalChat(bob.ID)); n != 0 {
		t.Fatalf("bob was told %d notes about talk and a deletion that were no answers of his", n)
	}
}
