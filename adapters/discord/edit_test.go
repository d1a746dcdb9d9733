package discord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// hasButton reports whether m carries a button for ref.
func hasButton(m discordfake.Message, ref core.Ref) bool {
	for _, b := range m.Buttons() {
		if b.CustomID == ref.Encode() {
			return true
		}
	}
	return false
}

// TestArgumentsTooLongToEditAreEditedElsewhere: an editable call whose
// arguments, as the modal would show them, do not fit the 4,000
// characters of its text input gets no "Edit and approve", and the card
// says where to edit them instead, as Telegram's does; a click on the
// button of a card drawn before (stale) is refused with that note and
// opens no modal. Arguments that fit by characters, however many bytes
// they take, keep the button, and its modal starts from them whole.
// Before, such a modal opened empty: with every key editable, what was
// typed replaced the whole object (unseen keys dropped); with some keys
// editable, no edit could succeed.
func TestArgumentsTooLongToEditAreEditedElsewhere(t *testing.T) {
	long, _ := json.Marshal(map[string]string{"path": "/etc/app.conf", "content": strings.Repeat("line of config\n", 300)})
	wide, _ := json.Marshal(map[string]string{"path": "/etc/app.conf", "content": strings.Repeat("é", 3000)}) // 6,000 bytes, 3,000 characters
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
			r := newRig(t, rigOptions{})
			q := r.ask(core.AskInput{Kind: core.KindApproval, Text: "Write the config?", Tool: "write_file",
				Arguments: tc.args, Editable: tc.editable})
			c := r.card(q.ID, nil)
			edit := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}
			if got := hasButton(c, edit); got != tc.offer {
				t.Fatalf("Edit and approve offered: %v, want %v", got, tc.offer)
			}
			if says := strings.Contains(c.Content, "too long to edit in Discord"); says == tc.offer {
				t.Fatalf("the card says the arguments are too long to edit: %v\n%s", says, c.Content)
			}
			click := r.fake.Click(alice, c.ID, edit.Encode())
			if !tc.offer {
				click = r.staleClick(alice, c, edit.Encode()) // a card drawn before, with the button
			}
			resp := r.post(click)
			if tc.offer {
				if v := resp.InputValues()[textInputID]; resp.Type != discordfake.ResponseModal || v != core.PrettyJSON(tc.args) {
					t.Fatalf("the modal (type %d) starts from %d characters, not the arguments whole", resp.Type, width(v))
				}
				return
			}
			if resp.Type != discordfake.ResponseMessage || resp.Flags()&discordfake.FlagEphemeral == 0 ||
				!strings.Contains(resp.Content(), "too long to edit in Discord") {
				t.Fatalf("a stale edit click got type %d %q", resp.Type, resp.Content())
			}
			if got := r.question(q.ID); !got.Open() || count(r.events(q.ID), core.EventRefused) != 0 {
				t.Fatalf("the stale click changed the question: %s %v", got.State, r.events(q.ID))
			}
		})
	}
}

// TestBatchCallTooLongToEditIsNamed: on a batch card, only the call
// whose arguments do not fit loses its "Edit and approve", and one line
// names it.
func TestBatchCallTooLongToEditIsNamed(t *testing.T) {
	long, _ := json.Marshal(map[string]string{"content": strings.Repeat("x", 4100)})
	ed := &core.Editable{All: true}
	r := newRig(t, rigOptions{})
	q := r.ask(core.AskInput{Kind: core.KindApproval, Text: "Run these?", Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "a", Arguments: json.RawMessage(`{"x":1}`), Editable: ed},
		{ToolCallID: "c2", Tool: "b", Arguments: long, Editable: ed},
	}})
	c := r.card(q.ID, nil)
	if !hasButton(c, core.Ref{QuestionID: q.ID, Item: 0, Action: core.RefEdit}) || hasButton(c, core.Ref{QuestionID: q.ID, Item: 1, Action: core.RefEdit}) {
		t.Fatalf("edit buttons: %+v", c.Buttons())
	}
	if !strings.Contains(c.Content, "The arguments of call 2 are too long to edit in Discord") {
		t.Fatalf("the card does not name the call:\n%s", c.Content)
	}
	resp := r.post(r.staleClick(alice, c, core.Ref{QuestionID: q.ID, Item: 1, Action: core.RefEdit}.Encode()))
	if resp.Type != discordfake.ResponseMessage || !strings.Contains(resp.Content(), "too long to edit in Discord") {
		t.Fatalf("a stale edit click got type %d %q", resp.Type, resp.Content())
	}
}

// TestStaleTextButtonSaysThePartIsAnswered: a button that collects text
// ("Something else", a call's Deny or Edit), clicked on a card drawn
// before its item or call got an answer, tells the clicker it was
// already answered (decided), by whom and when, and changes nothing.
// Before, they were told the button does not fit the question.
func TestStaleTextButtonSaysThePartIsAnswered(t *testing.T) {
	r := newRig(t, rigOptions{})
	f := r.ask(core.AskInput{Kind: core.KindForm, Text: "Release plan", Reversibility: core.Reversible, Items: []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Notes?", Options: []core.FormOption{{ID: "s", Label: "Short"}, {ID: "l", Label: "Long"}}},
	}})
	fc := r.card(f.ID, nil)
	other := r.button(fc, core.Ref{QuestionID: f.ID, Item: 0, Action: core.RefText}) // drawn before the answer
	r.post(r.fake.Click(bob, fc.ID, r.button(fc, core.Ref{QuestionID: f.ID, Item: 0, Action: core.RefOption, Option: 1}).CustomID))

	ed := &core.Editable{All: true}
	b := r.ask(core.AskInput{Kind: core.KindApproval, Text: "Run these?", Calls: []core.CallInput{
		{ToolCallID: "c1", Tool: "a", Arguments: json.RawMessage(`{"x":1}`), Editable: ed},
		{ToolCallID: "c2", Tool: "b", Arguments: json.RawMessage(`{"y":2}`), Editable: ed},
	}})
	bc := r.card(b.ID, nil)
	deny2 := r.button(bc, core.Ref{QuestionID: b.ID, Item: 1, Action: core.RefDeny})
	edit2 := r.button(bc, core.Ref{QuestionID: b.ID, Item: 1, Action: core.RefEdit})
	r.post(r.fake.Click(bob, bc.ID, r.button(bc, core.Ref{QuestionID: b.ID, Item: 1, Action: core.RefApprove}).CustomID))

	for _, tc := range []struct {
		name string
		q    *core.Question
		card discordfake.Message
		b    discordfake.Button
		want string
	}{
		{"something else", f, fc, other, "Item 1 was already answered by Bob at "},
		{"deny", b, bc, deny2, "Call 2 was already decided by Bob at "},
		{"edit", b, bc, edit2, "Call 2 was already decided by Bob at "},
	} {
		before := r.question(tc.q.ID)
		resp := r.post(r.fake.Click(alice, tc.card.ID, tc.b.CustomID))
		if resp.Type != discordfake.ResponseMessage || !strings.Contains(resp.Content(), tc.want) {
			t.Fatalf("%s: a stale click got type %d %q, want %q", tc.name, resp.Type, resp.Content(), tc.want)
		}
		if got := r.question(tc.q.ID); !got.Open() || len(got.Answers) != len(before.Answers) {
			t.Fatalf("%s: the stale click changed the question: %s %+v", tc.name, got.State, got.Answers)
		}
	}
	// A button for no item is on no card: it is refused as such.
	resp := r.post(r.fake.Click(alice, fc.ID, core.Ref{QuestionID: f.ID, Item: 5, Action: core.RefText}.Encode()))
	if resp.Content() != card.NotOnCardNote {
		t.Fatalf("a button for no item got %q", resp.Content())
	}
}
