package telegram

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TestEditKeepsArgumentsThatStartWithAt: arguments are shown, and the
// edit prompt starts from them, as they were asked, an "@" at a word's
// start included (Telegram makes no mention inside <pre>), so the JSON
// copied from the prompt approves what was asked, with only the change
// made. Before, the "@" became a full-width "＠" there, and the copied
// edit was refused for changing a key it did not change (or, with every
// key editable, approved a package nobody asked for).
func TestEditKeepsArgumentsThatStartWithAt(t *testing.T) {
	for name, editable := range map[string]*core.Editable{
		"one key":   {Keys: []string{"version"}},
		"every key": {All: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.run()
			q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Install the package?", ToolCallID: "toolu_1", Tool: "npm_install",
				Arguments: json.RawMessage(`{"package":"@types/node","version":"1.0.0"}`), Editable: editable})
			c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
			if !strings.Contains(c.Text, `"package": "@types/node"`) {
				t.Fatalf("the card's arguments are not as asked:\n%s", c.Text)
			}
			e.click(userAlice, c, findButton(t, c, card.LabelEditApprove))
			p := e.prompt(nil)
			start, end := strings.Index(p.Text, "{"), strings.LastIndex(p.Text, "}")
			if start < 0 || end < start {
				t.Fatalf("no arguments in the prompt:\n%s", p.Text)
			}
			prefill := p.Text[start : end+1]
			if !strings.Contains(prefill, `"package": "@types/node"`) {
				t.Fatalf("the prompt starts from other arguments: %q", prefill)
			}
			before := len(e.fake.Messages(room))
			if _, err := e.fake.Reply(userAlice, room, p.ID, strings.Replace(prefill, "1.0.0", "2.0.0", 1)); err != nil {
				t.Fatal(err)
			}
			got := e.wait(q.ID, func(q *core.Question) bool { return !q.Open() || len(e.fake.Messages(room)) > before })
			if got.Open() {
				t.Fatalf("the edit copied from the prompt was refused: %q", e.lastText(before))
			}
			if ed := got.Resolution.Edit; ed == nil || string(ed.Arguments) != `{"package":"@types/node","version":"2.0.0"}` {
				t.Fatalf("approved %+v", got.Resolution.Edit)
			}
		})
	}
}

// TestArgumentsTooLongToEditAreEditedElsewhere: an editable call whose
// arguments would not fit whole in the edit prompt gets no "Edit and
// approve" (its prompt would carry them cut, no longer JSON), and the
// card says where to edit them instead, as Teams' does; arguments that
// fit keep the button, and its prompt carries them whole.
func TestArgumentsTooLongToEditAreEditedElsewhere(t *testing.T) {
	for _, c := range []struct {
		name   string
		script string
		offer  bool
	}{
		{"short", "echo hi", true},
		{"too long", strings.Repeat("x", 5000), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := approval()
			q.Call.Arguments = json.RawMessage(`{"env":"prod","script":"` + c.script + `"}`)
			q.Call.Editable = &core.Editable{Keys: []string{"env"}}
			view := cardOf(q)
			offered := false
			for _, row := range rows(t, q) {
				for _, label := range row {
					offered = offered || strings.Contains(label, card.LabelEditApprove)
				}
			}
			if offered != c.offer {
				t.Fatalf("Edit and approve offered: %v, want %v", offered, c.offer)
			}
			text, _ := cardText(view, tooLongToEdit(view))
			if says := strings.Contains(text, "too long to edit"); says == c.offer {
				t.Fatalf("the card says the arguments are too long to edit: %v", says)
			}
			if !offered {
				return
			}
			p, err := RenderPrompt(view, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}, room, 1, &userAlice)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := telegramfake.PlainText(p.Text)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(plain[strings.Index(plain, "{"):strings.LastIndex(plain, "}")+1]), &v); err != nil || v["script"] != c.script {
				t.Fatalf("the prompt's arguments are not the call's (%v):\n%s", err, plain)
			}
		})
	}
}

// TestEditPromptBuiltOncePerRender: a card's "Edit and approve" prompts
// are each built once per render of the card (post or edit), and the
// keyboard and the text agree on the one decision: the button offered
// exactly when the card does not say the arguments are too long. Before,
// the text and the keyboard each built every prompt.
func TestEditPromptBuiltOncePerRender(t *testing.T) {
	builds := 0
	measuredPrompt = func(c card.Card, r core.Ref, chat int64, replyTo int, to *tgbotapi.User) (tgbotapi.MessageConfig, error) {
		builds++
		return RenderPrompt(c, r, chat, replyTo, to)
	}
	t.Cleanup(func() { measuredPrompt = RenderPrompt })
	short, long := "echo hi", strings.Repeat("x", 5000)
	q := batchOf(3, func(int) string { return "shell.run" }, func(i int) string { return []string{short, long, short}[i] })
	for i := range q.Calls {
		q.Calls[i].Editable = &core.Editable{All: true}
	}
	c := cardOf(q)
	for name, render := range map[string]func() (string, tgbotapi.InlineKeyboardMarkup, error){
		"post": func() (string, tgbotapi.InlineKeyboardMarkup, error) {
			m, err := RenderCard(c, room)
			kb, _ := m.ReplyMarkup.(tgbotapi.InlineKeyboardMarkup)
			return m.Text, kb, err
		},
		"edit": func() (string, tgbotapi.InlineKeyboardMarkup, error) {
			e, err := RenderEdit(c, room, 1)
			return e.Text, *e.ReplyMarkup, err
		},
	} {
		t.Run(name, func(t *testing.T) {
			builds = 0
			text, kb, err := render()
			if err != nil {
				t.Fatal(err)
			}
			if builds != len(q.Calls) {
				t.Errorf("%d edit prompts built for a card of %d editable calls", builds, len(q.Calls))
			}
			offered := 0
			for _, row := range kb.InlineKeyboard {
				for _, b := range row {
					if strings.Contains(b.Text, card.LabelEditApprove) {
						offered++
					}
				}
			}
			if says := strings.Count(text, "too long to edit"); offered != 2 || says != 1 {
				t.Errorf("%d Edit and approve offered and %d calls said too long to edit, want 2 and 1", offered, says)
			}
		})
	}
}
