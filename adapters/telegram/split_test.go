package telegram

import (
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// splitParts are a long answer as a Telegram client sends it: cut after
// half the 4,096-character limit at a break, each part a reply to the
// same message (Telegram Desktop's CutPart, and its send loop that gives
// every part the reply).
func splitParts() (first, rest string) {
	first = strings.TrimSpace(strings.Repeat("The migration must keep the old column until every reader moved. ", 60))
	rest = strings.TrimSpace(strings.Repeat("Then drop it in a release of its own, after a week. ", 20))
	return first, rest
}

// TestLongReplySplitByTelegramIsToldTruthfully: a reply over Telegram's
// 4,096 characters reaches the bot as several messages, each a reply to
// the prompt. The first is recorded as the answer (one message is one
// answer: nothing joins them, for a join would have to hold the answer
// back, unrecorded, for parts that may never come); each part after it
// is told that only the first, of so many characters, was recorded, and
// how to give a longer answer. The prompt says so before anyone replies.
// Before, the prompt said nothing of it, and each later part was told
// "Already closed. Answered by <the replier>. Your answer was not
// recorded.", which reads as though the answer itself was lost.
func TestLongReplySplitByTelegramIsToldTruthfully(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "How should the migration go?"})
	prompt := e.prompt(nil)
	if !strings.Contains(prompt.Text, "4,096 characters") || !strings.Contains(prompt.Text, "askbridge show "+string(q.ID)) {
		t.Fatalf("the prompt does not say how long a reply may be, or how to give a longer answer:\n%s", prompt.Text)
	}
	first, rest := splitParts()
	if units(first) <= MaxText/2 || units(first) > MaxText {
		t.Fatalf("the first part is %d units: not one a client cuts", units(first))
	}
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, first); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got.Resolution.Answer != first {
		t.Fatalf("the answer recorded is %d characters, not the first part's %d", len(got.Resolution.Answer), len(first))
	}
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, rest); err != nil {
		t.Fatal(err)
	}
	note := e.lastText(before)
	for _, want := range []string{"several messages", "first, " + strconv.Itoa(len([]rune(first))) + " characters, was recorded", "askbridge show " + string(q.ID)} {
		if !strings.Contains(note, want) {
			t.Errorf("the second part was told %q: it does not say %q", note, want)
		}
	}
	if strings.Contains(note, "Your answer was not recorded") {
		t.Errorf("the second part was told the answer was not recorded: %q", note)
	}

	// Another's reply after the close, and one's own after a short
	// answer, are told the question's outcome as before: neither can be
	// a part Telegram split off.
	before = len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userBob, room, prompt.ID, rest); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.HasPrefix(got, "Already closed. Answered by Alice Ops") {
		t.Fatalf("another's late reply was told %q", got)
	}
	q2 := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	p2 := e.prompt(func(m telegramfake.Message) bool { return strings.Contains(m.Text, string(q2.ID)) })
	if _, err := e.fake.Reply(userAlice, room, p2.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	e.wait(q2.ID, func(q *core.Question) bool { return !q.Open() })
	before = len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, p2.ID, "or us-east-1"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.HasPrefix(got, "Already closed by your earlier answer: Answered by Alice Ops") {
		t.Fatalf("a second reply after a short answer was told %q", got)
	}
}

// TestLongItemReplySplitByTelegramIsToldTruthfully: the same for a form
// item's own answer ("Something else"): the form stays open for its
// other items, and the later part is told that the item took the first.
func TestLongItemReplySplitByTelegramIsToldTruthfully(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindForm, Text: "Release", Items: []core.FormItem{
		{ID: "channel", Question: "Channel?", Options: []core.FormOption{{ID: "beta", Label: "Beta"}, {ID: "stable", Label: "Stable"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "none", Label: "None"}}},
	}})
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if note := e.click(userAlice, c, findButton(t, c, "2. Something else")); !strings.Contains(note, "Reply to the prompt") {
		t.Fatalf("something else: %q", note)
	}
	prompt := e.prompt(func(m telegramfake.Message) bool { return strings.Contains(m.Text, "Release notes?") })
	if !strings.Contains(prompt.Text, "4,096 characters") {
		t.Fatalf("the item's prompt does not say how long a reply may be:\n%s", prompt.Text)
	}
	first, rest := splitParts()
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, first); err != nil {
		t.Fatal(err)
	}
	got := e.wait(q.ID, func(q *core.Question) bool { return len(q.Answers) == 1 })
	if got.Answers[0].Text != first {
		t.Fatalf("the item's answer is %d characters, not the first part's %d", len(got.Answers[0].Text), len(first))
	}
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, prompt.ID, rest); err != nil {
		t.Fatal(err)
	}
	note := e.lastText(before)
	if !strings.Contains(note, "several messages") || !strings.Contains(note, "item 2") {
		t.Fatalf("the item's second part was told %q", note)
	}
	if got := e.get(q.ID); !got.Open() || len(got.Answers) != 1 {
		t.Fatalf("the second part changed the form: %s, %d answers", got.State, len(got.Answers))
	}
}
