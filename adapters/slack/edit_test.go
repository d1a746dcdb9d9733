package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// editClick clicks ref's button on card m as Slack sends it (with a
// trigger id, so the adapter may open a modal), whether or not m shows
// that button (a stale card did).
func (e *env) editClick(u slackfake.User, m slackfake.Message, ref core.Ref) {
	e.t.Helper()
	v := ref.Encode()
	status, _, err := slackfake.Click(e.srv.URL+slack.InteractivityPath, secret,
		e.fake.ClickWithTrigger(u, m, slackfake.Button{ActionID: v, Value: v})).Send(e.t.Context())
	if err != nil || status != 200 {
		e.t.Fatalf("click answered %d: %v", status, err)
	}
}

func hasRef(m slackfake.Message, ref core.Ref) bool {
	for _, b := range m.Buttons() {
		if b.Value == ref.Encode() {
			return true
		}
	}
	return false
}

// TestArgumentsTooLongToEditAreEditedElsewhere: an editable call whose
// arguments, as the modal would show them, do not fit the 3,000
// characters of its input gets no "Edit and approve", and the card says
// where to edit them instead, as Telegram's does; a click on the button
// of a card drawn before (stale) is refused with that note and opens no
// modal. Arguments that fit by characters, however many bytes they take,
// keep the button, and its modal starts from them whole. Before, such a
// modal opened empty: with every key editable, what was typed replaced
// the whole object; with some keys editable, no edit could succeed.
func TestArgumentsTooLongToEditAreEditedElsewhere(t *testing.T) {
	long, _ := json.Marshal(map[string]string{"path": "/etc/app.conf", "content": strings.Repeat("line of config\n", 250)})
	wide, _ := json.Marshal(map[string]string{"path": "/etc/app.conf", "content": strings.Repeat("é", 2000)}) // 4,000 bytes, 2,000 characters
	for _, tc := range []struct {
		name     string
		args     json.RawMessage
		editable *core.Editable
		offer    bool
	}{
		{"too long, every key editable", long, &core.Editable{All: true}, false},
		{"too long, one key editable", long, &core.Editable{Keys: []string{"path"}}, false},
		{"fits in characters", wide, &core.Editable{All: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, false)
			q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Write the config?", Tool: "write_file",
				Arguments: tc.args, Editable: tc.editable})
			c := e.card(q.ID)
			edit := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}
			if got := hasRef(c, edit); got != tc.offer {
				t.Fatalf("Edit and approve offered: %v, want %v", got, tc.offer)
			}
			if says := strings.Contains(c.PlainText(), "too long to edit in Slack"); says == tc.offer {
				t.Fatalf("the card says the arguments are too long to edit: %v\n%s", says, c.PlainText())
			}
			e.editClick(alice, c, edit) // a stale card's button when not offered
			if tc.offer {
				e.until("the edit modal", func() bool { return len(e.fake.Views()) == 1 })
				if in := e.fake.Views()[0].Inputs(); len(in) != 1 || in[0].Initial != core.PrettyJSON(tc.args) {
					t.Fatalf("the modal does not start from the arguments whole: %+v", in)
				}
				return
			}
			if note := e.note(alice, 0); !strings.Contains(note, "too long to edit in Slack") {
				t.Fatalf("a stale edit click was told %q", note)
			}
			if n := len(e.fake.Views()); n != 0 {
				t.Fatalf("%d modals opened", n)
			}
			if got := e.get(q.ID); !got.Open() {
				t.Fatalf("the stale click changed the question: %s", got.State)
			}
		})
	}
}

// TestStaleEditOnDecidedCallSaysSo: "Edit and approve" clicked on a
// batch card drawn before its call was decided tells the clicker the
// call was already decided, by whom and when, and opens no modal.
// Before, they were told the button does not fit the question.
func TestStaleEditOnDecidedCallSaysSo(t *testing.T) {
	e := newEnv(t, false)
	ed := &core.Editable{All: true}
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Run these?", Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "a", Arguments: json.RawMessage(`{"x":1}`), Editable: ed},
		{ToolCallID: "c2", Tool: "b", Arguments: json.RawMessage(`{"y":2}`), Editable: ed},
	}})
	c := e.card(q.ID)
	e.click(bob, c, button(t, c, core.RefApprove, 1, 0))
	e.until("call 2 decided", func() bool { return len(e.get(q.ID).Answers) == 1 })
	e.editClick(alice, c, core.Ref{QuestionID: q.ID, Item: 1, Action: core.RefEdit})
	if note := e.note(alice, 0); !strings.HasPrefix(note, "Call 2 was already decided by Bob at ") {
		t.Fatalf("a stale edit click was told %q", note)
	}
	if n := len(e.fake.Views()); n != 0 {
		t.Fatalf("%d modals opened", n)
	}
	if got := e.get(q.ID); !got.Open() || len(got.Answers) != 1 {
		t.Fatalf("the stale click changed the question: %s %+v", got.State, got.Answers)
	}
}
