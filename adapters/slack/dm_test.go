package slack_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// TestDMMessageOutsideAThreadIsToldHowToAnswer: a person asked in a DM
// who writes their answer in the DM itself, not in the card's thread,
// is told privately that it was not recorded and how to answer; Slack
// sends it once (a retry of the event is not told again). Before, it was
// dropped with nothing said, and the person took the question for
// answered while the agent waited on. Talk in a channel outside any
// thread is still left alone.
func TestDMMessageOutsideAThreadIsToldHowToAnswer(t *testing.T) {
	e := newEnvPeople(t, false, nil, map[string]core.Person{
		"alice": {Name: "alice", IDs: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}, DM: true},
	}, nil)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	dm := e.dmCard(q.ID)
	send := func(m slackfake.Message, retries int) {
		t.Helper()
		body, _ := e.fake.ReplyEvent(m)
		for i := 0; i <= retries; i++ {
			req := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body)
			req.RetryNum = i
			if status, resp, err := req.Send(t.Context()); err != nil || status != http.StatusOK {
				t.Fatalf("event answered %d %q: %v", status, resp, err)
			}
		}
	}
	send(e.fake.AddReply(room, "", alice.ID, "morning all"), 0)
	own := e.fake.AddReply(dm.Room, "", alice.ID, "eu-west-1")
	send(own, 1)
	note := e.note(alice, 0)
	if !strings.Contains(note, "not recorded") || !strings.Contains(note, "thread") {
		t.Fatalf("a message in the DM outside the card's thread was told %q", note)
	}
	if n := e.fake.Ephemerals()[0]; n.Channel != dm.Room || n.ThreadTS != "" {
		t.Fatalf("the note went to %s thread %q; want the DM %s itself", n.Channel, n.ThreadTS, dm.Room)
	}
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("the DM message changed the question: %s", got.State)
	}
	// A reply in a thread under her own message is no answer either
	// (auth.test, which tells her messages from the bot's, has answered:
	// Run asks it before any note goes out).
	send(e.fake.AddReply(dm.Room, own.TS, alice.ID, "eu-west-1, I said"), 0)
	if got := e.note(alice, 1); got != note {
		t.Fatalf("a reply under her own DM message was told %q", got)
	}
	// The reply in the card's thread then counts. A user's notes go out
	// in order (one queue), so the third is its note only if neither the
	// channel's chatter nor the retried DM event was told anything.
	e.reply(alice, slackfake.Message{Channel: dm.Room, TS: dm.ID}, "eu-west-1", 0)
	if got := e.note(alice, 2); !strings.HasPrefix(got, "Recorded") {
		t.Fatalf("alice's third note is %q; want the card thread reply's", got)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the thread reply: %s %+v", got.State, got.Resolution)
	}
}

// dmCard waits for question id's card in a DM (a D… channel) and
// returns it.
func (e *env) dmCard(id core.QuestionID) core.MessageRef {
	e.t.Helper()
	var dm core.MessageRef
	e.until("the DM card", func() bool {
		for _, m := range e.get(id).Messages {
			if strings.HasPrefix(m.Room, "D") {
				dm = m
				return true
			}
		}
		return false
	})
	return dm
}
