package slack_test

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestReplyIsRecordedAsTyped: a thread reply is recorded as its writer
// typed it, not as Slack's markup. Slack links a host name, an email
// address or a URL typed as plain words (<http://db.internal|db.internal>),
// writes mentions and channels as <@U…> and <#C…|name>, and escapes
// &, < and >; a link made with the editor's link tool keeps its address
// beside its words. Before, only the escaping was undone: an answer of
// "db.internal" reached the agent as "<http://db.internal|db.internal>".
// An edit of the reply is still known for the answer's.
func TestReplyIsRecordedAsTyped(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Where does it run?"})
	posted := e.card(q.ID)
	send := func(body []byte) {
		t.Helper()
		if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
			t.Fatalf("event answered %d %q: %v", status, resp, err)
		}
	}
	const (
		sent = "<http://db.internal|db.internal> &amp; <mailto:ops@example.com|ops@example.com>, " +
			"<https://wiki.example.com/x?a=1&amp;b=2>, <https://wiki.example.com/runbook|the runbook>, " +
			"ask <@U0BOB> in <#C0OPS|ops> &lt;now&gt; <!here>"
		want = "db.internal & ops@example.com, https://wiki.example.com/x?a=1&b=2, " +
			"the runbook (https://wiki.example.com/runbook), ask @U0BOB in #ops <now> @here"
	)
	answer := e.fake.AddReply(posted.Channel, posted.TS, alice.ID, sent)
	body, _ := e.fake.ReplyEvent(answer)
	send(body)
	e.note(alice, 0)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != want {
		t.Fatalf("recorded %s %q\nwant %q", got.State, got.Resolution.Answer, want)
	}
	body, _ = e.fake.EditReply(answer, "<http://db2.internal|db2.internal>")
	send(body)
	if note := e.note(alice, 1); note != card.EditedAnswerNote {
		t.Fatalf("the edited answer was told %q", note)
	}
}
