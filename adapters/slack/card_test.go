package slack

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

func TestQuestionOfCard(t *testing.T) {
	other := core.NewID(0)
	head := func(id core.QuestionID) slack.Block { return section(headPrefix+string(id), "x") }
	btn := func(id core.QuestionID) *slack.ButtonBlockElement {
		return button(card.Action{Ref: core.Ref{QuestionID: id, Item: -1, Action: core.RefDecline}, Label: "Decline", Style: card.StyleDefault})
	}
	for _, c := range []struct {
		name   string
		blocks []slack.Block
		want   core.QuestionID
	}{
		{"card", []slack.Block{head(qid), actions("a", btn(qid))}, qid},
		{"closed card keeps its head", []slack.Block{head(qid), section("outcome", "done")}, qid},
		{"buttons only", []slack.Block{sectionWith("o", "x", btn(qid))}, qid},
		{"head and button disagree", []slack.Block{head(qid), actions("a", btn(other))}, ""},
		{"not a ref", []slack.Block{head(qid), actions("a", slack.NewButtonBlockElement("v", "approve", nil))}, ""},
		{"bad id in head", []slack.Block{head("nope")}, ""},
		{"someone else's message", []slack.Block{section("x", "hello")}, ""},
		{"nothing", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, ok := QuestionOfCard(roundTrip(t, c.blocks))
			if id != c.want || ok != (c.want != "") {
				t.Fatalf("got %q %v, want %q", id, ok, c.want)
			}
		})
	}
}

// TestQuestionOfReminder: a reminder posted where its card is not names
// its question, whatever backticks and ids the agent's text holds; one in
// its card's thread, a card and anyone's message name none.
func TestQuestionOfReminder(t *testing.T) {
	q := clarificationQ()
	q.Text = "Use `" + string(core.NewID(0)) + "` or ``?"
	alone := card.NewReminder(q, core.SurfaceSlack, "C0ELSE")
	inThread := alone
	inThread.ReplyTo = &core.MessageRef{Surface: core.SurfaceSlack, Room: "C0ELSE", ID: "1.000001"}
	for _, c := range []struct {
		name   string
		blocks []slack.Block
		want   core.QuestionID
	}{
		{"alone", Reminder(alone).Blocks, q.ID},
		{"in its card's thread", Reminder(inThread).Blocks, ""},
		{"a card", cardFor(q, false).Blocks, ""},
		{"a look-alike (the caller checks whose)", []slack.Block{section(reminderBlock, "see `"+qid+"`")}, qid},
		{"two spans", []slack.Block{section(reminderBlock, "`"+qid+"` `"+qid+"`")}, ""},
		{"nothing", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, ok := QuestionOfReminder(roundTrip(t, c.blocks))
			if id != c.want || ok != (c.want != "") {
				t.Fatalf("got %q %v, want %q", id, ok, c.want)
			}
		})
	}
}

// FuzzQuestionOfCard feeds arbitrary message JSON, as conversations.replies
// could return it, to the card decoder: it never panics, and whatever it
// accepts is a valid question id that every id-bearing part agrees on.
func FuzzQuestionOfCard(f *testing.F) {
	for _, q := range []*core.Question{decisionQ(), approvalQ(), formQ(), clarificationQ()} {
		raw, _ := json.Marshal(map[string]any{"type": "message", "ts": "1.1", "blocks": cardFor(q, false).Blocks})
		f.Add(raw)
	}
	f.Add([]byte(`{"blocks":[{"type":"section","block_id":"askbridge:","text":{"type":"mrkdwn","text":"x"}}]}`))
	f.Add([]byte(`{"blocks":[{"type":"actions","elements":[{"type":"button","value":"1x-0aaaaaaaaaaaaaaaaa"},{"type":"button"}]}]}`))
	f.Add([]byte(`{"blocks":[{"type":"section","accessory":{"type":"button","value":null}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m slack.Message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		id, ok := QuestionOfCard(m.Blocks)
		if ok != (id != "") || ok && !core.ValidID(id) {
			t.Fatalf("accepted %q (%v)", id, ok)
		}
		if !ok {
			return
		}
		// Every part that names a question names this one.
		for _, b := range buttons(m.Blocks.BlockSet) {
			if r, err := core.DecodeRef(b.Value); err != nil || r.QuestionID != id {
				t.Fatalf("accepted %q beside button %q", id, b.Value)
			}
		}
	})
}
