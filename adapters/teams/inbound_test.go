package teams_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

func releaseForm() core.AskInput {
	return core.AskInput{Kind: core.KindForm, Text: "Release plan", Reversibility: core.Reversible, Items: []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}}
}

// option is the data of the action that picks option o of item i.
func option(id core.QuestionID, i, o int) map[string]any {
	return map[string]any{teams.DataRef: core.Ref{QuestionID: id, Item: i, Option: o, Action: core.RefOption}.Encode()}
}

func (e *env) deliver(act map[string]any) []byte {
	e.t.Helper()
	status, body, err := e.fake.Deliver(act, "")
	if err != nil || status != http.StatusOK {
		e.t.Fatalf("delivery: %d %v %s", status, err, body)
	}
	return body
}

// refusals are q's refused events.
func (e *env) refusals(id core.QuestionID) int {
	n := 0
	for _, ev := range coretest.EventsOf(e.t, e.svc, id) {
		if ev.Kind == core.EventRefused {
			n++
		}
	}
	return n
}

// TestRepeatedActivityCountsOnce: the Bot Connector sending an activity
// again (same id) changes nothing the second time. Before, a form's
// thread reply delivered twice answered its item and then the next one
// with the same words, closing the form, and a click's second copy told
// the clicker that their own answer had refused it. The copy is told
// what the first copy was told, which Teams did not show.
func TestRepeatedActivityCountsOnce(t *testing.T) {
	e := newEnv(t)
	q := e.ask(releaseForm())
	m := e.card(q.ID, nil)
	reply := e.fake.ReplyActivity(alice, m.Conversation, "Tuesday")
	e.deliver(reply)
	e.deliver(reply)
	if got := e.get(q.ID); len(got.Answers) != 1 || got.Answers[0].ItemID != "day" || !got.Open() {
		t.Fatalf("one reply delivered twice: %s %+v", got.State, got.Answers)
	}
	click := e.fake.ExecuteActivity(bob, m, teams.Verb, option(q.ID, 1, 0))
	first, err := teamsfake.InvokeNote(e.deliver(click))
	if err != nil || !strings.HasPrefix(first, "Recorded") {
		t.Fatalf("the click: %q %v", first, err)
	}
	again, err := teamsfake.InvokeNote(e.deliver(click))
	if err != nil || again != first {
		t.Fatalf("the click's second copy was told %q %v; want what the first was told, %q", again, err, first)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].OptionID != "short" {
		t.Fatalf("after the click: %s %+v", got.State, got.Answers)
	}
}

// TestFormReplyAnswersTheItemItWasWrittenFor: a thread reply answers the
// item that was the form's next when it was written (its timestamp),
// and is refused, with a note, if someone answered that item before it
// was handled. Before, it was recorded as the answer to the next item,
// which it was never written for.
func TestFormReplyAnswersTheItemItWasWrittenFor(t *testing.T) {
	e := newEnv(t)
	q := e.ask(releaseForm())
	m := e.card(q.ID, nil)
	reply := e.fake.ReplyActivity(alice, m.Conversation, "Tuesday, after the freeze") // written now
	if note := e.execute(bob, m, option(q.ID, 0, 0)); !strings.HasPrefix(note, "Recorded") {
		t.Fatalf("bob's click was told %q", note)
	}
	e.deliver(reply) // handled after the click
	if !e.toldPrivately(alice, "already answered") {
		t.Fatalf("the replier was told nothing; answers %+v", e.get(q.ID).Answers)
	}
	if got := e.get(q.ID); !got.Open() || len(got.Answers) != 1 || got.Answers[0].OptionID != "mon" {
		t.Fatalf("the day reply changed another item: %s %+v", got.State, got.Answers)
	}
	// Written after the click: a second on, past the millisecond askbridge
	// stamped the click with (within which the order is not known).
	after := e.fake.ReplyActivity(alice, m.Conversation, "Short, please")
	after["timestamp"] = time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	e.deliver(after)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Answers[1].ItemID != "notes" || got.Answers[1].Text != "Short, please" {
		t.Fatalf("a reply written after the click: %s %+v", got.State, got.Answers)
	}
}

// TestActionFromAnotherMessageIsRefused: an action's data counts only
// from a card of its own question, in the conversation it was posted to.
// Teams merges the data client side, so a client can send any card's
// data from any message. Before, a question's Approve sent from another
// question's card, or from a personal chat, approved it.
func TestActionFromAnotherMessageIsRefused(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging tables?", Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
	m := e.card(q.ID, nil)
	other := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	m2 := e.card(other.ID, nil)
	approve := action(t, m, card.LabelApprove)
	const refused = "That button is not on this question's card. Nothing was recorded."
	if note := e.execute(alice, m2, approve); note != refused {
		t.Fatalf("from another question's card: told %q", note)
	}
	dm := teamsfake.Message{Conversation: teamsfake.PersonalChat(alice.ID), ID: m.ID}
	if note := e.execute(alice, dm, approve); note != refused {
		t.Fatalf("from a personal chat: told %q", note)
	}
	e.deliver(e.fake.SubmitActivity(alice, m2, approve))
	if !e.toldPrivately(alice, "not on this question's card") {
		t.Fatal("a submit from another card was not told")
	}
	if got := e.get(q.ID); !got.Open() || e.refusals(q.ID) != 0 {
		t.Fatalf("an action from another message reached core: %s, %d refusals", got.State, e.refusals(q.ID))
	}
	if note := e.execute(alice, m, approve); note != "Recorded: Approved" {
		t.Fatalf("from its own card: told %q", note)
	}
}

// TestReplyToStandaloneReminderAnswers: a reminder posted where the card
// is not starts a thread of its own, tied to its question as a card's
// thread is, so a reply there answers as one in the card's thread does.
// Before, the reply was dropped without a word.
func TestReplyToStandaloneReminderAnswers(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	e.card(q.ID, nil)
	const elsewhere = "19:else0000000000000000000000000000@thread.tacv2"
	if err := e.a.Remind(t.Context(), e.get(q.ID), elsewhere); err != nil {
		t.Fatal(err)
	}
	var rem teamsfake.Message
	for _, x := range e.fake.Messages() {
		if x.Channel == elsewhere && x.ID == x.Root && x.Summary == card.ReminderHeading {
			rem = x
		}
	}
	if rem.ID == "" {
		t.Fatalf("no reminder thread in %s: %+v", elsewhere, e.fake.Messages())
	}
	e.deliver(e.fake.ReplyActivity(alice, rem.Conversation, "eu-west-1"))
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply to the reminder: %s %+v", got.State, got.Resolution)
	}
}

// TestAnswerOutlivesHangUp: a thread reply whose request the Bot
// Connector gives up on while it is handled is still recorded. Before,
// the answer ran under the request's context, and its store write was
// cancelled with it.
func TestAnswerOutlivesHangUp(t *testing.T) {
	kv := &readHook{}
	e := newEnvWith(t, func(v core.Values) core.Values { kv.Values = v; return kv }, nil)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	body, _ := json.Marshal(e.fake.ReplyActivity(alice, m.Conversation, "eu-west-1"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The Bot Connector hangs up as the reply's thread is read.
	hangUp := func() error { cancel(); return nil }
	kv.hook.Store(&hangUp)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, teams.MessagesPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.fake.Sign(teamsfake.Token{}))
	e.web.Config.Handler.ServeHTTP(httptest.NewRecorder(), req)
	if ctx.Err() == nil {
		t.Fatal("the request was never given up on")
	}
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply given up on: %s %+v", got.State, got.Resolution)
	}
}
