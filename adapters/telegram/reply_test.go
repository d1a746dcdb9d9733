package telegram

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TestTextLinkReplyKeepsTheURL: a reply whose writer formatted a link
// (a text_link entity: the address is not in the text) reaches the agent
// as "label (url)", the entities' UTF-16 offsets counted past emoji
// before and between the links; a text_mention stays the name as
// written. Before, the answer was the labels alone, the addresses lost.
func TestTextLinkReplyKeepsTheURL(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Where is the runbook for the failover?"})
	c := e.card(q.ID, func(telegramfake.Message) bool { return true })
	u, err := e.fake.FormattedReplyUpdate(userAlice, room, c.ID,
		`🚀 Follow <a href="https://wiki.example/runbooks/failover-v2">this one</a>, 📘 <b>not</b> <a href="https://wiki.example/old">the 🗑 old one</a>; ask Bob`)
	if err != nil {
		t.Fatal(err)
	}
	msg := u["message"].(map[string]any)
	text := msg["text"].(string)
	msg["entities"] = append(msg["entities"].([]any), map[string]any{"type": "text_mention",
		"offset": len(utf16.Encode([]rune(text))) - 3, "length": 3, "user": map[string]any{"id": userBob.ID, "is_bot": false, "first_name": "Bob"}})
	if _, err := e.fake.Deliver(u); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	want := "🚀 Follow this one (https://wiki.example/runbooks/failover-v2), 📘 not the 🗑 old one (https://wiki.example/old); ask Bob"
	if got.Resolution.Answer != want {
		t.Fatalf("the agent got %q\nwant %q", got.Resolution.Answer, want)
	}
}

// TestAnonymousReplyIsToldAndNotRecorded: a reply to a question's card
// from an administrator who remains anonymous (from GroupAnonymousBot,
// sender_chat the group), or sent as a channel (from Channel_Bot,
// sender_chat the channel), records nothing and is told, in the chat,
// that it cannot be attributed and how to answer. Another bot's reply
// stays ignored. Before, both vanished without a word.
func TestAnonymousReplyIsToldAndNotRecorded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		from   tgbotapi.User
		sender map[string]any
	}{
		{"anonymous admin", tgbotapi.User{ID: 1087968824, IsBot: true, FirstName: "Group", UserName: "GroupAnonymousBot"},
			map[string]any{"id": room, "type": "supergroup", "title": "askbridge ops"}},
		{"as a channel", tgbotapi.User{ID: 136817688, IsBot: true, FirstName: "Channel", UserName: "Channel_Bot"},
			map[string]any{"id": int64(-1009876543210), "type": "channel", "title": "Ops news"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.run()
			q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
			c := e.card(q.ID, func(telegramfake.Message) bool { return true })
			e.prompt(nil) // the clarification's own prompt, sent after its card
			before := len(e.fake.Messages(room))
			other, err := e.fake.ReplyUpdate(tgbotapi.User{ID: 5555, IsBot: true, FirstName: "Other bot"}, room, c.ID, "us-east-1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.fake.Deliver(other); err != nil { // handled before Deliver returns
				t.Fatal(err)
			}
			u, err := e.fake.ReplyUpdate(tc.from, room, c.ID, "eu-west-1")
			if err != nil {
				t.Fatal(err)
			}
			u["message"].(map[string]any)["sender_chat"] = tc.sender
			if _, err := e.fake.Deliver(u); err != nil {
				t.Fatal(err)
			}
			if !e.fake.Wait(5*time.Second, func() bool { return len(e.fake.Messages(room)) > before }) {
				t.Fatal("the anonymous replier was told nothing")
			}
			msgs := e.fake.Messages(room)
			if got := msgs[len(msgs)-1].Text; !strings.Contains(got, "cannot be attributed") || !strings.Contains(got, `"Remain anonymous"`) {
				t.Fatalf("the anonymous replier was told %q", got)
			}
			if len(msgs) != before+1 || msgs[len(msgs)-1].ReplyTo == 0 {
				t.Fatalf("%d messages since, want the one note as a reply", len(msgs)-before)
			}
			if got := e.get(q.ID); !got.Open() || len(e.events(q.ID, core.EventRefused)) != 0 || len(e.events(q.ID, core.EventAnswered)) != 0 {
				t.Fatalf("a reply nobody can be named for was recorded: %s", got.State)
			}
		})
	}
}

// TestStaleEditTapOnDecidedCall: "2. Edit and approve" tapped on a batch
// card's keyboard drawn before call 2 was decided tells the tapper the
// call was already decided, by whom and when, and sends no prompt; a
// stale "Something else" on a form item says the item was already
// answered. Before, the edit tap was told the question no longer exists,
// while it was open.
func TestStaleEditTapOnDecidedCall(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	ed := &core.Editable{All: true}
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Run these?", Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "a", Arguments: json.RawMessage(`{"x":1}`), Editable: ed},
		{ToolCallID: "c2", Tool: "b", Arguments: json.RawMessage(`{"y":2}`), Editable: ed},
	}})
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 4 })
	edit2 := findButton(t, c, "2. Edit")
	e.click(userBob, c, findButton(t, c, "2. Approve"))
	if note := e.click(userAlice, c, edit2); !strings.HasPrefix(note, "Call 2 was already decided by Bob at ") {
		t.Fatalf("a stale edit tap was told %q", note)
	}
	if got := e.get(q.ID); !got.Open() || len(got.Answers) != 1 {
		t.Fatalf("the stale tap changed the question: %s %+v", got.State, got.Answers)
	}

	f := e.ask(core.AskInput{Kind: core.KindForm, Text: "Release plan", Items: []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Notes?", Options: []core.FormOption{{ID: "s", Label: "Short"}, {ID: "l", Label: "Long"}}},
	}})
	fc := e.card(f.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 4 })
	other := findButton(t, fc, "1. "+card.LabelSomethingElse)
	e.click(userBob, fc, findButton(t, fc, "1. Monday"))
	if note := e.click(userAlice, fc, other); !strings.HasPrefix(note, "Item 1 was already answered by Bob at ") {
		t.Fatalf("a stale 'Something else' tap was told %q", note)
	}
	for _, m := range e.fake.Messages(room) {
		if m.ForceReply != nil {
			t.Fatalf("a stale tap sent a prompt: %q", m.Text)
		}
	}
}
