package telegram

import (
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// oldCard is the callback's message as Telegram sends it for a message
// too old to show (its content and date left out, an InaccessibleMessage
// since Bot API 7.0): its chat and id alone, no keyboard.
func oldCard(c telegramfake.Message) map[string]any {
	return map[string]any{"message_id": c.ID, "date": 0, "chat": map[string]any{"id": c.ChatID, "type": "supergroup", "title": "askbridge ops"}}
}

// untouched fails t unless q is still open with no refusal recorded:
// nothing of what was tapped reached core.
func (e *env) untouched(id core.QuestionID, what string) {
	e.t.Helper()
	if got := e.get(id); !got.Open() || len(got.Answers) != 0 || len(e.events(id, core.EventRefused)) != 0 {
		e.t.Fatalf("%s changed the question: %s, %d answers, %d refusals", what, got.State, len(got.Answers), len(e.events(id, core.EventRefused)))
	}
}

// TestForgedDataOnItsOwnCardIsRefused: a tap on one of the question's
// own cards counts only with a button that card carries (law 5: the
// button's value is the whole act, so it must be one the card offers).
// Data that names an option the card does not show, an item the form
// does not have, or an altered form of a real button is refused with
// the same note as data from another message, and reaches no core. A
// card whose content Telegram leaves out of the callback (an old
// message) is checked against the card as it now stands, so its real
// buttons still count. Before, any data that decoded was taken on the
// question's own card: an Approve with its item and option digits
// altered approved the call.
func TestForgedDataOnItsOwnCardIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the table?", Tool: "sql", Arguments: []byte(`{"q":"DROP TABLE t"}`)})
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) == 3 })
	approve := findButton(t, c, card.LabelApprove)
	forged := map[string]string{
		"approve, item and option altered": core.Ref{QuestionID: q.ID, Item: 3, Action: core.RefApprove, Option: 5}.Encode(),
		"approve, option altered":          core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove, Option: 1}.Encode(),
		"deny, item altered":               core.Ref{QuestionID: q.ID, Item: 0, Action: core.RefDeny}.Encode(),
		"a standing approval not offered":  core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefStanding}.Encode(),
		"an edit not offered":              core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}.Encode(),
		"an option of no decision":         core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 7}.Encode(),
	}
	for what, data := range forged {
		if note := e.click(userAlice, c, telegramfake.Button{Data: data}); note != card.NotOnCardNote {
			t.Errorf("%s (%s): told %q", what, data, note)
		}
		if note := e.tapFrom(oldCard(c), data); note != card.NotOnCardNote {
			t.Errorf("%s (%s) from the card's old message: told %q", what, data, note)
		}
	}
	// Data no layout of this version wrote reads as no question at all,
	// as an unknown id does (law 6): a forged value learns nothing.
	if note := e.click(userAlice, c, telegramfake.Button{Data: "2" + approve.Data[1:]}); note != "This question no longer exists." {
		t.Errorf("another layout version: told %q", note)
	}
	e.untouched(q.ID, "a forged tap")
	if note := e.tapFrom(oldCard(c), approve.Data); note != "Recorded: Approved" {
		t.Fatalf("Approve from the card's old message: told %q", note)
	}
}

// TestForgedDataOnAFormsCardIsRefused: on a form's own card, data that
// names an item the form does not have, or an option its item does not
// have, is refused as not on the card; a tap on an item answered since
// (a stale card, or an old message Telegram leaves the keyboard out of)
// is told who answered it.
func TestForgedDataOnAFormsCardIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(releaseForm())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	for what, data := range map[string]string{
		"an item the form lacks":     core.Ref{QuestionID: q.ID, Item: 5, Action: core.RefOption}.Encode(),
		"an option the item lacks":   core.Ref{QuestionID: q.ID, Item: 0, Action: core.RefOption, Option: 3}.Encode(),
		"free text for no item":      core.Ref{QuestionID: q.ID, Item: 4, Action: core.RefText}.Encode(),
		"free text for the question": core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}.Encode(),
	} {
		if note := e.click(userAlice, c, telegramfake.Button{Data: data}); note != card.NotOnCardNote {
			t.Errorf("%s (%s): told %q", what, data, note)
		}
	}
	e.untouched(q.ID, "a forged tap")
	beta := findButton(t, c, "1. Beta")
	if note := e.click(userAlice, c, beta); !strings.HasPrefix(note, "Recorded") {
		t.Fatalf("Beta: told %q", note)
	}
	// The card's keyboard no longer carries item 1's buttons once the
	// edit lands; until then, and from an old message, a tap on them is
	// told who answered.
	if note := e.tapFrom(oldCard(c), findButton(t, c, "1. Stable").Data); !strings.HasPrefix(note, "Item 1 was already answered by Alice Ops") {
		t.Fatalf("Stable after Beta, from the old message: told %q", note)
	}
}

// TestForgedApproveAllOnACrowdedCardIsRefused: a batch card too crowded
// to show every call leaves off "Approve all" and the buttons of the
// calls it does not show (crowd.go), so that no tap approves what the
// card hides. Data for them, sent on that very card, is refused and
// decides nothing. Before, it was taken on the question's own card and
// approved every call, those the card left off among them.
func TestForgedApproveAllOnACrowdedCardIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	args := adaptertest.LongCall("./step.sh <in >out @ops && ", 90).Arguments
	in := core.AskInput{Kind: core.KindApproval, Text: strings.Repeat("Clean the build tree and rebuild each package in turn. ", 27)}
	for i := range core.MaxBatchCalls {
		in.Calls = append(in.Calls, core.CallInput{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), Tool: "Bash", Arguments: args})
	}
	q := e.ask(in)
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	all := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}.Encode()
	last := core.Ref{QuestionID: q.ID, Item: core.MaxBatchCalls - 1, Action: core.RefApprove}.Encode()
	for _, data := range []string{all, last} {
		if strings.Contains(buttonsData(c), data) {
			t.Fatalf("the crowded card carries %s: the test needs a card that leaves it off", data)
		}
		if note := e.click(userAlice, c, telegramfake.Button{Data: data}); note != card.NotOnCardNote {
			t.Errorf("%s: told %q", data, note)
		}
	}
	e.untouched(q.ID, "a forged Approve all")
}

// TestReplyToAPromptThatDoesNotFitIsTold: a reply whose prompt names a
// part the question does not have (a prompt sent for a forged tap before
// the taps were checked against the card, say) is told why nothing was
// recorded. Before, it was dropped without a word.
func TestReplyToAPromptThatDoesNotFitIsTold(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	q := e.ask(releaseForm())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	p, err := RenderPrompt(card.New(q, core.MessageRef{}), core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}, room, c.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := e.a.send(t.Context(), place{chat: room}, p)
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.fake.Messages(room))
	if _, err := e.fake.Reply(userAlice, room, sent.MessageID, "beta, and short"); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.Contains(got, "does not fit this question") {
		t.Fatalf("the replier was told %q", got)
	}
	e.untouched(q.ID, "the reply")
}
