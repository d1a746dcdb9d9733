package telegram

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// notesSent waits until no note or prompt holds a place in the queue:
// each one a handled update asked for has been sent (or given up).
func (e *env) notesSent() {
	e.t.Helper()
	if !e.fake.Wait(10*time.Second, func() bool {
		e.a.prompts.mu.Lock()
		defer e.a.prompts.mu.Unlock()
		return e.a.prompts.held == 0
	}) {
		e.t.Fatal("notes still wait to be sent")
	}
}

// repliesTo lists the bot's messages in the room that reply to message id.
func (e *env) repliesTo(id int) []telegramfake.Message {
	var out []telegramfake.Message
	for _, m := range e.fake.Messages(room) {
		if m.ReplyTo == id {
			out = append(out, m)
		}
	}
	return out
}

// TestEditedAnswerIsToldItStands: a reply recorded as its writer's
// answer stays the answer (law 2; the agent may have acted on it), but
// Telegram lets its writer edit it afterwards, and shows "edited". The
// writer is told, as a reply to it, that the answer stands as first
// written, as Slack and Teams tell theirs; an edit of a reply that was
// not recorded as its writer's answer is told nothing. Before,
// edited_message was not among the updates asked for, and the writer
// saw their edit stand with nothing said while the agent went on with
// the first words.
func TestEditedAnswerIsToldItStands(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	if _, _, allowed := e.fake.Webhook(); !strings.Contains(allowed, `"edited_message"`) {
		t.Errorf("the webhook asks for %s, without edited messages", allowed)
	}
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	prompt := e.prompt(nil)
	reply := func(u map[string]any) int {
		e.deliverID(u)
		return u["message"].(map[string]any)["message_id"].(int)
	}
	stranger, err := e.fake.ReplyUpdate(userMallory, room, prompt.ID, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	strangerID := reply(stranger) // refused by core, and not told in a group
	answer, err := e.fake.ReplyUpdate(userAlice, room, prompt.ID, "eu-west-1")
	if err != nil {
		t.Fatal(err)
	}
	answerID := reply(answer)
	e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	e.notesSent()

	e.deliverID(e.fake.EditUpdate(stranger, "us-east-2"))
	before := len(e.fake.Messages(room))
	e.deliverID(e.fake.EditUpdate(answer, "eu-west-2"))
	if got := e.lastText(before); got != card.EditedAnswerNote {
		t.Fatalf("the edited answer was told %q", got)
	}
	e.notesSent()
	if told := e.repliesTo(answerID); len(told) != 1 {
		t.Fatalf("%d notes answer the edited answer; want 1", len(told))
	}
	if told := e.repliesTo(strangerID); len(told) != 0 {
		t.Fatalf("the stranger's edited reply, never recorded, was told %q", told[0].Text)
	}
	if got := e.get(q.ID); got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the answer is now %q", got.Resolution.Answer)
	}

	// A form item's own answer, edited, is told the same.
	f := e.ask(releaseForm())
	c := e.card(f.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	e.click(userBob, c, findButton(t, c, "Something else"))
	itemPrompt := e.prompt(func(m telegramfake.Message) bool { return strings.Contains(m.Text, "Channel?") })
	own, err := e.fake.ReplyUpdate(userBob, room, itemPrompt.ID, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	ownID := reply(own)
	e.wait(f.ID, func(q *core.Question) bool { _, ok := q.Answered("channel"); return ok })
	e.notesSent()
	before = len(e.fake.Messages(room))
	e.deliverID(e.fake.EditUpdate(own, "weekly"))
	if got := e.lastText(before); got != card.EditedAnswerNote {
		t.Fatalf("the edited item answer was told %q", got)
	}
	if told := e.repliesTo(ownID); len(told) != 1 {
		t.Fatalf("%d notes answer the edited item answer; want 1", len(told))
	}
}

// TestEditedArgumentsAreToldTheyStand: the reply that gave "Edit and
// approve" its JSON arguments is an answer too: edited once recorded, its
// writer is told the answer stands as first written, as a text answer's
// writer is, whether it approved a lone call or one call of a batch; the
// approved arguments stay those first sent. A refused reply's edit is
// told nothing. Before, the edit of the arguments went unanswered while
// Telegram showed the new ones as "edited".
func TestEditedArgumentsAreToldTheyStand(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	reply := func(u map[string]any) int {
		e.deliverID(u)
		return u["message"].(map[string]any)["message_id"].(int)
	}
	editedTo := func(u map[string]any, text string) string {
		e.notesSent()
		before := len(e.fake.Messages(room))
		e.deliverID(e.fake.EditUpdate(u, text))
		e.notesSent()
		if len(e.fake.Messages(room)) == before {
			return ""
		}
		return e.lastText(before)
	}
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Install the package?", ToolCallID: "toolu_1", Tool: "npm_install",
		Arguments: json.RawMessage(`{"package":"left-pad","version":"1.0.0"}`), Editable: &core.Editable{Keys: []string{"version"}}})
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	e.click(userAlice, c, findButton(t, c, card.LabelEditApprove))
	p := e.prompt(func(m telegramfake.Message) bool { return m.ReplyTo == c.ID })
	args, err := e.fake.ReplyUpdate(userAlice, room, p.ID, `{"package":"left-pad","version":"2.0.0"}`)
	if err != nil {
		t.Fatal(err)
	}
	argsID := reply(args)
	e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got := editedTo(args, `{"package":"left-pad","version":"3.0.0"}`); got != card.EditedAnswerNote {
		t.Fatalf("the edited arguments were told %q", got)
	}
	if told := e.repliesTo(argsID); len(told) != 1 {
		t.Fatalf("%d notes answer the edited arguments; want 1", len(told))
	}
	if got := e.get(q.ID); got.Resolution.Edit == nil || string(got.Resolution.Edit.Arguments) != `{"package":"left-pad","version":"2.0.0"}` {
		t.Fatalf("approved %+v", got.Resolution.Edit)
	}

	// One call of a batch, edited and approved by Bob's reply; Mallory's
	// reply before it was refused, and its edit is told nothing.
	ed := &core.Editable{All: true}
	b := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Run these?", Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "a", Arguments: json.RawMessage(`{"x":1}`), Editable: ed},
		{ToolCallID: "c2", Tool: "b", Arguments: json.RawMessage(`{"y":2}`), Editable: ed},
	}})
	bc := e.card(b.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 4 })
	e.click(userBob, bc, findButton(t, bc, "2. Edit"))
	bp := e.prompt(func(m telegramfake.Message) bool { return m.ReplyTo == bc.ID })
	stranger, err := e.fake.ReplyUpdate(userMallory, room, bp.ID, `{"y":5}`)
	if err != nil {
		t.Fatal(err)
	}
	strangerID := reply(stranger)
	call, err := e.fake.ReplyUpdate(userBob, room, bp.ID, `{"y":3}`)
	if err != nil {
		t.Fatal(err)
	}
	callID := reply(call)
	e.wait(b.ID, func(q *core.Question) bool { _, ok := q.Answered("c2"); return ok })
	if got := editedTo(stranger, `{"y":6}`); got != "" {
		t.Fatalf("the stranger's edited reply, never recorded, was told %q", got)
	}
	if got := editedTo(call, `{"y":4}`); got != card.EditedAnswerNote {
		t.Fatalf("the edited arguments of a batch's call were told %q", got)
	}
	if n, m := len(e.repliesTo(callID)), len(e.repliesTo(strangerID)); n != 1 || m != 0 {
		t.Fatalf("%d notes answer the call's edited arguments (want 1), %d the stranger's (want 0)", n, m)
	}
	if a, _ := e.get(b.ID).Answered("c2"); a.Edit == nil || string(a.Edit.Arguments) != `{"y":3}` {
		t.Fatalf("call 2 approved with %+v", a.Edit)
	}
}
