package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestSocketMode delivers a click and a thread reply over Socket Mode,
// end to end: the envelope is acknowledged, core records the answer, the
// clicker gets a note and the card is edited without buttons. After
// Slack asks the client to reconnect, clicks still arrive.
func TestSocketMode(t *testing.T) {
	e := newEnv(t, true)
	e.until("a socket mode connection", func() bool { return e.fake.Connections() > 0 })

	q := e.ask(decision())
	card := e.card(q.ID)
	env, err := e.fake.SendEnvelope("interactive", slackfake.ClickPayload(alice, card, button(t, card, core.RefOption, -1, 1)), wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the ack", func() bool { return e.fake.Acked(env) })
	if note := e.note(alice, 0); !strings.Contains(note, "DynamoDB") {
		t.Fatalf("note %q", note)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" || got.Resolution.Decider.Name != "Alice" {
		t.Fatalf("after the click: %s %+v", got.State, got.Resolution)
	}
	e.until("the card edit", func() bool {
		m, _ := e.fake.Message(card.Channel, card.TS)
		return m.Edits > 0 && len(m.Buttons()) == 0 && strings.Contains(m.PlainText(), "Answered by Alice")
	})

	e.fake.Disconnect()
	e.until("a reconnect", func() bool { return e.fake.Calls("apps.connections.open") >= 2 && e.fake.Connections() > 0 })

	c := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	ccard := e.card(c.ID)
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(ccard.Channel, ccard.TS, alice.ID, "eu-west-1 &amp; friends"))
	env, err = e.fake.SendEnvelope("events_api", body, wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the ack and the answer", func() bool {
		got := e.get(c.ID)
		return e.fake.Acked(env) && got.State == core.StateAnswered
	})
	if got := e.get(c.ID); got.Resolution.Answer != "eu-west-1 & friends" || got.Resolution.Decider.ID != alice.ID {
		t.Fatalf("answer %+v", got.Resolution)
	}
}

// TestSocketSubmitLeavesReadLoopFree: a modal submission that waits on
// Slack (users.info held, for a submitter whose name is not cached yet)
// does not stop the socket's read loop: an envelope sent after it is
// acknowledged while the submission still waits, and once Slack answers,
// the submission is acknowledged and recorded. Before, the submission ran
// on the read loop, so every later click and event waited for it and, past
// Slack's 3 s, the clicker was shown an error for an answer that counted.
// (A later click would wait on users.info too, for its clicker's name,
// and be acknowledged only once answered: the later envelope is one the
// read loop acknowledges itself.)
func TestSocketSubmitLeavesReadLoopFree(t *testing.T) {
	// The ack budget outlasts every wait below, so nothing but the read
	// loop being free can let the later envelope through while
	// users.info is held.
	e := newEnvWith(t, true, func(o *slack.Options) { o.AckBudget = 10 * wait })
	e.until("a socket mode connection", func() bool { return e.fake.Connections() > 0 })

	call, view := e.editable()

	release := e.fake.Hold("users.info")
	defer release()
	before := e.fake.Calls("users.info")
	sub, err := e.fake.SendEnvelope("interactive", slackfake.SubmitPayload(alice, view, map[string]string{"arguments": `{"q":"select 1"}`}), wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the submission to wait on users.info", func() bool { return e.fake.Calls("users.info") > before })
	later, err := e.fake.SendEnvelope("slash_commands", []byte(`{"command":"/x"}`), wait)
	if err != nil {
		t.Fatal(err)
	}
	e.until("the later envelope's ack while the submission waits on users.info", func() bool { return e.fake.Acked(later) })
	if e.fake.Acked(sub) {
		t.Fatal("the submission was acknowledged before it was answered")
	}

	release()
	e.until("the submission's ack", func() bool { return e.fake.Acked(sub) })
	got := e.get(call.ID)
	if got.State != core.StateAnswered || got.Resolution.Edit == nil || got.Resolution.Decider.ID != alice.ID {
		t.Fatalf("after the submission: %s %+v", got.State, got.Resolution)
	}
}

// editable asks for approval of a call whose arguments may be edited, and
// returns it once its card is posted, with the card's edit modal as
// Slack hands it back on submission.
func (e *env) editable() (*core.Question, slackfake.View) {
	e.t.Helper()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Run it?", Tool: "sql",
		Arguments: json.RawMessage(`{"q":"drop"}`), Editable: &core.Editable{Keys: []string{"q"}}})
	c := e.card(q.ID)
	return q, editView(e.t, e.get(q.ID), c.Channel)
}

// editView is the edit modal the adapter opens for q's "Edit and approve"
// button on a card in channel, as Slack would hand it back on submission.
func editView(t *testing.T, q *core.Question, channel string) slackfake.View {
	t.Helper()
	req, ok := slack.EditView(card.New(q, core.MessageRef{}), core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}, channel)
	if !ok {
		t.Fatal("the card has no edit action")
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return slackfake.View{ID: "V0EDIT", User: alice.ID, Raw: raw}
}
