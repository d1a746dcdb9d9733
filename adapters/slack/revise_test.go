package slack_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestRevisedAnswerIsToldItStands: a thread reply recorded as the answer,
// then edited or deleted, changes nothing (a question closes once), and
// its writer is told so privately: the answer stands as first written,
// and the card shows it. Before, the edit and the deletion went unsaid:
// the reply read "(edited)" in Slack, or was gone, while the agent had
// acted on the words first written. Nothing is said when no recorded
// answer changed: Slack's own edits that keep the words (a link
// unfurled), an edit of a reply that was not the answer, or an edit Slack
// sends again.
func TestRevisedAnswerIsToldItStands(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	posted := e.card(q.ID)
	send := func(body []byte) {
		t.Helper()
		if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
			t.Fatalf("event answered %d %q: %v", status, resp, err)
		}
	}
	answer := e.fake.AddReply(posted.Channel, posted.TS, alice.ID, "eu-west-1")
	body, _ := e.fake.ReplyEvent(answer)
	send(body)
	if note := e.note(alice, 0); !strings.Contains(note, "Recorded") {
		t.Fatalf("the answer was told %q", note)
	}
	chatter := e.fake.AddReply(posted.Channel, posted.TS, alice.ID, "thanks")
	body, _ = e.fake.ReplyEvent(chatter)
	send(body)
	if note := e.note(alice, 1); !strings.Contains(note, "Already closed") {
		t.Fatalf("the reply after the answer was told %q", note)
	}

	body, _ = e.fake.EditReply(chatter, "thanks!") // not the answer
	send(body)
	body, _ = e.fake.EditReply(answer, answer.Text) // Slack's own, words unchanged
	send(body)
	body, _ = e.fake.EditReply(answer, "us-east-1")
	send(body)
	send(body) // sent again, as Slack retries
	edited := e.note(alice, 2)
	if edited != card.EditedAnswerNote {
		t.Fatalf("the edited answer was told %q", edited)
	}
	answer, _ = e.fake.Message(answer.Channel, answer.TS) // as edited
	body, _ = e.fake.DeleteReply(answer)
	send(body)
	if note := e.note(alice, 3); note != card.DeletedAnswerNote {
		t.Fatalf("the deleted answer was told %q", note)
	}
	if n := e.notesTo(alice); n != 4 {
		t.Fatalf("%d notes to the writer; want 4 (answer, chatter, edit, deletion)", n)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("after the edit and the deletion: %s %+v", got.State, got.Resolution)
	}
}
