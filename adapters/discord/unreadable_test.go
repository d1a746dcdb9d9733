package discord

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
)

// TestUnreadableInteractionSaysSo: an answer discordgo could not read
// (a modal submitted with a component newer than v0.29.0, a Label, which
// the SDK hands on over the gateway with its data nil) is refused with a
// private note that says what happened: askbridge could not read it,
// nothing was recorded, and where to answer instead. Before, the note
// said the question no longer existed, of a question still open, to a
// person whose typed answer had just been dropped.
func TestUnreadableInteractionSaysSo(t *testing.T) {
	r := newRig(t, rigOptions{gateway: true})
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	q := r.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	r.card(q.ID, nil)
	before := len(r.events(q.ID))
	bad := labelModal(r, q.ID)
	if err := r.fake.Dispatch(bad); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(bad.ID)) > 0 }) {
		t.Fatal("no answer to an unreadable modal")
	}
	wantUnreadableNote(t, r.fake.Responses(bad.ID)[0])
	if got := r.question(q.ID); got.State != core.StateOpen || len(r.events(q.ID)) != before {
		t.Fatalf("an unreadable answer changed the question: %s, %v", got.State, r.events(q.ID))
	}
}

// TestUnreadableInteractionOverHTTPSaysSo: the same unreadable modal
// posted to the interactions endpoint, signed, gets the same private
// note in its response; signed with another key it is refused 401, as
// any request that fails the signature. Before, a genuine request whose
// data discordgo could not read was answered 400, and Discord told the
// person only that the interaction failed.
func TestUnreadableInteractionOverHTTPSaysSo(t *testing.T) {
	r := newRig(t, rigOptions{})
	q := r.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	r.card(q.ID, nil)
	before := len(r.events(q.ID))
	bad := labelModal(r, q.ID)
	status, _, err := r.fake.Post(r.url, bad, discordfake.BadSignature)
	if err != nil || status != http.StatusUnauthorized {
		t.Fatalf("an unreadable modal with a bad signature: %d %v; want 401", status, err)
	}
	status, resp, err := r.fake.Post(r.url, bad, discordfake.Signed)
	if err != nil || status != http.StatusOK || resp == nil {
		t.Fatalf("a genuine unreadable modal: %d %v; want 200 and a note", status, err)
	}
	wantUnreadableNote(t, *resp)
	if got := r.question(q.ID); got.State != core.StateOpen || len(r.events(q.ID)) != before {
		t.Fatalf("an unreadable answer changed the question: %s, %v", got.State, r.events(q.ID))
	}
}

// labelModal is a modal submitted for question id's free-text button
// with its text input inside a Label (type 18), which discordgo v0.29.0
// cannot read.
func labelModal(r *rig, id core.QuestionID) discordfake.Interaction {
	return r.fake.Raw(map[string]any{"type": 5, "application_id": r.fake.AppID, "channel_id": roomID, "version": 1,
		"member": map[string]any{"user": map[string]any{"id": alice.ID, "username": "alice"}, "roles": []string{}},
		"data": map[string]any{"custom_id": core.Ref{QuestionID: id, Item: -1, Action: core.RefText}.Encode(), "components": []any{map[string]any{"type": 18, "label": "x",
			"component": map[string]any{"type": 4, "custom_id": textInputID, "value": "eu-west-1"}}}}})
}

// wantUnreadableNote fails t unless resp is the private note that says
// askbridge could not read what was sent and recorded nothing.
func wantUnreadableNote(t *testing.T, resp discordfake.Response) {
	t.Helper()
	if resp.Type != discordfake.ResponseMessage || resp.Flags()&discordfake.FlagEphemeral == 0 {
		t.Fatalf("response %d, flags %d: want a private note", resp.Type, resp.Flags())
	}
	note := resp.Content()
	if strings.Contains(note, "no longer exists") || !strings.Contains(note, "could not read") || !strings.Contains(note, "nothing was recorded") {
		t.Fatalf("the note for an answer askbridge could not read: %q", note)
	}
}
