package discord

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// untouched fails the test unless q is still open, with no answer and no
// refusal recorded: nothing of what was clicked reached core.
func (r *rig) untouched(id core.QuestionID, what string) {
	r.t.Helper()
	got := r.question(id)
	if !got.Open() || len(got.Answers) != 0 || count(r.events(id), core.EventRefused) != 0 {
		r.t.Fatalf("%s changed the question: %s, %d answers, events %v", what, got.State, len(got.Answers), r.events(id))
	}
}

// notCarried fails the test if m has a button with custom_id id: a test
// of forged clicks needs one the card does not show.
func notCarried(t *testing.T, m discordfake.Message, id string) {
	t.Helper()
	for _, b := range m.Buttons() {
		if b.CustomID == id {
			t.Fatalf("the card carries %s (%q): the test needs one it does not", id, b.Label)
		}
	}
}

// TestForgedCustomIDOnItsOwnCardIsRefused: a click counts only with a
// custom_id that is a button of the message it came from (law 5: the
// custom_id is the whole act, so it must be one the card offers).
// Discord's documentation does not promise that the custom_id it passes
// on is one of the message's; the message it sends with it is its own.
// An Approve with its item or option altered, a standing approval or an
// edit the card does not offer, an option of no decision, a modal
// submitted for an edit the card has no button for: each is refused with
// a private note, reaches no core (no answer, no refusal recorded) and
// leaves the card as it was. Before, any custom_id that decoded to a ref
// of the question was taken: the altered Approve approved the call.
func TestForgedCustomIDOnItsOwnCardIsRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the table?", Tool: "sql", Arguments: []byte(`{"q":"DROP TABLE t"}`)})
	c := r.card(q.ID, func(m discordfake.Message) bool { return len(m.Buttons()) > 0 })
	forged := map[string]string{
		"approve, item and option altered": core.Ref{QuestionID: q.ID, Item: 3, Action: core.RefApprove, Option: 5}.Encode(),
		"approve, option altered":          core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove, Option: 1}.Encode(),
		"a standing approval not offered":  core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefStanding}.Encode(),
		"an edit not offered":              core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}.Encode(),
		"an option of no decision":         core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 7}.Encode(),
	}
	for what, id := range forged {
		notCarried(t, c, id)
		resp := r.post(r.fake.Click(alice, c.ID, id))
		if resp.Type != discordfake.ResponseMessage || resp.Flags()&discordfake.FlagEphemeral == 0 || resp.Content() != card.NotOnCardNote {
			t.Errorf("%s (%s): response %d %q", what, id, resp.Type, resp.Content())
		}
	}
	edit := core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefEdit}.Encode()
	if resp := r.post(r.fake.Submit(alice, c.ID, edit, map[string]string{textInputID: `{"q":"SELECT 1"}`})); resp.Content() != card.NotOnCardNote {
		t.Errorf("a modal for an edit the card does not offer: response %d %q", resp.Type, resp.Content())
	}
	r.untouched(q.ID, "a forged click")
	if m, _ := r.fake.Message(c.ID); m.Edits != 0 || m.Content != c.Content {
		t.Fatalf("a forged click edited the card: %d edits\n%s", m.Edits, m.Content)
	}
	// The card's own Approve still counts.
	approve := r.button(c, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove})
	if resp := r.post(r.fake.Click(alice, c.ID, approve.CustomID)); resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("Approve: response %d %q", resp.Type, resp.Content())
	}
	if got := r.question(q.ID); got.State != core.StateAnswered {
		t.Fatalf("Approve from the card: %s", got.State)
	}
}

// TestAnotherQuestionsButtonIsRefused: a custom_id of another question,
// sent from a card that does not carry it, decides neither question and
// does not turn the clicked card into the other one's. Before, it
// answered the other question (one whose card the clicker may never have
// seen) and the in-place update drew that question over the clicked
// card.
func TestAnotherQuestionsButtonIsRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	a := r.ask(decisionInput())
	b := r.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy to production?", Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	ac := r.card(a.ID, nil)
	bc := r.card(b.ID, nil)
	approveB := r.button(bc, core.Ref{QuestionID: b.ID, Item: -1, Action: core.RefApprove})
	resp := r.post(r.fake.Click(alice, ac.ID, approveB.CustomID))
	if resp.Type != discordfake.ResponseMessage || resp.Content() != card.NotOnCardNote {
		t.Fatalf("B's Approve from A's card: response %d %q", resp.Type, resp.Content())
	}
	r.untouched(a.ID, "B's button on A's card")
	r.untouched(b.ID, "B's button on A's card")
	if m, _ := r.fake.Message(ac.ID); m.Edits != 0 || !strings.Contains(m.Content, "Which database for the ledger?") {
		t.Fatalf("A's card after B's button was sent from it: %d edits\n%s", m.Edits, m.Content)
	}
}

// TestForgedApproveAllOnACrowdedCardIsRefused: a batch card too crowded
// to show every call leaves off "Approve all" and the buttons of the
// calls it does not show (crowd.go), so that no click approves what the
// card hides. Their custom_ids, sent from that very card, are refused and
// decide nothing. Before, they were taken and approved every call, those
// the card left off among them.
func TestForgedApproveAllOnACrowdedCardIsRefused(t *testing.T) {
	r := newRig(t, rigOptions{})
	call := adaptertest.LongCall("./step.sh <in >out @ops && ", 90)
	in := core.AskInput{Kind: core.KindApproval, Text: strings.Repeat("Clean the build tree and rebuild each package in turn. ", 27)}
	for i := range core.MaxBatchCalls {
		in.Calls = append(in.Calls, core.CallInput{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), Tool: "Bash", Arguments: call.Arguments})
	}
	q := r.ask(in)
	c := r.card(q.ID, func(m discordfake.Message) bool { return len(m.Buttons()) > 0 })
	for _, id := range []string{
		core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefApprove}.Encode(),
		core.Ref{QuestionID: q.ID, Item: core.MaxBatchCalls - 1, Action: core.RefApprove}.Encode(),
	} {
		notCarried(t, c, id)
		if resp := r.post(r.fake.Click(alice, c.ID, id)); resp.Content() != card.NotOnCardNote {
			t.Errorf("%s: response %d %q", id, resp.Type, resp.Content())
		}
	}
	r.untouched(q.ID, "a forged Approve all")
}

// staleClick is u's click on card c with a button whose custom_id is id
// that the card carried when it was drawn (by an earlier askbridge, say)
// and Discord still holds, though the card would not draw it now: the
// message in the payload carries it in a row of its own.
func (r *rig) staleClick(u discordfake.User, c discordfake.Message, id string) discordfake.Interaction {
	r.t.Helper()
	var body map[string]any
	if err := json.Unmarshal(r.fake.Click(u, c.ID, id).Body, &body); err != nil {
		r.t.Fatal(err)
	}
	msg, _ := body["message"].(map[string]any)
	rows, _ := msg["components"].([]any)
	msg["components"] = append(rows, map[string]any{"type": 1, "components": []any{
		map[string]any{"type": 2, "style": 2, "label": "Edit and approve", "custom_id": id},
	}})
	return r.fake.Raw(body)
}
