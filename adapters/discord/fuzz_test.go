package discord

import (
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/bwmarrin/discordgo"
)

// fuzzQuestions are one question of each kind; the fuzzer's ref is pointed
// at each in turn.
func fuzzQuestions() []*core.Question {
	return []*core.Question{clarificationQ(), decisionQ(), approvalQ(), formQ()}
}

// checkTranslation runs the whole interaction-to-answer path that needs no
// store, and checks what must hold whatever came in.
func checkTranslation(t *testing.T, i *discordgo.Interaction, customID string) {
	in, err := parseInteraction(i)
	if err != nil {
		if core.ErrorCode(err) != core.CodeNotFound {
			t.Fatalf("a refused interaction must read as unknown: %v", err)
		}
		return
	}
	if in.Ref.Encode() != customID {
		t.Fatalf("custom_id %q parsed to a ref that encodes as %q", customID, in.Ref.Encode())
	}
	if in.Decider.Surface != core.SurfaceDiscord || !utf8.ValidString(in.Text) || !utf8.ValidString(in.Decider.Name) {
		t.Fatalf("decider %+v text %q", in.Decider, in.Text)
	}
	if in.Submit && !takesText(in.Ref) {
		t.Fatalf("a modal for %+v", in.Ref)
	}
	for _, q := range fuzzQuestions() {
		q.ID = in.Ref.QuestionID
		ans, err := core.AnswerFor(q, in.Ref, in.Decider, in.Text)
		if err == nil && (ans.QuestionID != q.ID || ans.Decider.ID != in.Decider.ID) {
			t.Fatalf("answer %+v for %+v", ans, in.Ref)
		}
		if m, ok := RenderModal(card.New(q, core.MessageRef{}), in.Ref); ok {
			if m.Data.CustomID != customID || width(m.Data.Title) > maxModalTitle {
				t.Fatalf("modal %+v", m.Data)
			}
		}
	}
	if n := RenderNote(in.Text); width(n.Data.Content) > maxContent {
		t.Fatalf("note is %d wide", width(n.Data.Content))
	}
}

// FuzzInteraction feeds arbitrary custom_ids and modal values through the
// translation an interaction takes before it reaches core.
func FuzzInteraction(f *testing.F) {
	id := core.NewID(3)
	for _, r := range []core.Ref{
		{QuestionID: id, Item: -1, Action: core.RefOption, Option: 1},
		{QuestionID: id, Item: -1, Action: core.RefText},
		{QuestionID: id, Item: 2, Action: core.RefText},
		{QuestionID: id, Item: -1, Action: core.RefDeny},
		{QuestionID: id, Item: -1, Action: core.RefDecline},
	} {
		f.Add(r.Encode(), "eu-west-1", false)
		f.Add(r.Encode(), "a reason *with* markdown\n@everyone", true)
	}
	f.Add("click_one", "", false)
	f.Add("1o-0"+string(id)+"x", "\xff", true)
	f.Add("", "", true)
	f.Fuzz(func(t *testing.T, customID, value string, submit bool) {
		user := &discordgo.User{ID: "53908232506183680", Username: value}
		i := &discordgo.Interaction{Type: discordgo.InteractionMessageComponent, Member: &discordgo.Member{User: user, Roles: []string{value}},
			Message: &discordgo.Message{ID: "1"},
			Data:    discordgo.MessageComponentInteractionData{CustomID: customID, ComponentType: discordgo.ButtonComponent}}
		if submit {
			i.Type = discordgo.InteractionModalSubmit
			i.Data = discordgo.ModalSubmitInteractionData{CustomID: customID, Components: []discordgo.MessageComponent{
				&discordgo.ActionsRow{Components: []discordgo.MessageComponent{&discordgo.TextInput{CustomID: textInputID, Value: value}}},
			}}
		}
		checkTranslation(t, i, customID)
	})
}

// FuzzInteractionJSON feeds arbitrary request bodies through discordgo's
// decoding and the translation, as the HTTP endpoint does after the
// signature check.
func FuzzInteractionJSON(f *testing.F) {
	for _, name := range []string{"discord-interaction-button.json", "discord-interaction-modal-submit.json"} {
		raw, err := os.ReadFile("discordfake/fixtures/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"type":5,"data":{"custom_id":"1t--aaaaaaaaaaaaaaaaa","components":[{"type":1,"components":[{"type":4,"custom_id":"text","value":"x"}]}]}}`))
	f.Add([]byte(`{"type":3,"data":{"custom_id":"1o-0aaaaaaaaaaaaaaaaa","component_type":2}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var i discordgo.Interaction
		if json.Unmarshal(body, &i) != nil {
			return
		}
		customID := ""
		switch d := i.Data.(type) {
		case discordgo.MessageComponentInteractionData:
			customID = d.CustomID
		case discordgo.ModalSubmitInteractionData:
			customID = d.CustomID
		}
		checkTranslation(t, &i, customID)
	})
}

// FuzzEscape: escaped text stays valid, within its limit, and never ends
// in a lone backslash that would escape what follows.
func FuzzEscape(f *testing.F) {
	f.Add("*bold* _it_ `code` @everyone", 10)
	f.Add("🚀🚀🚀", 3)
	f.Add("\xff\\", 2)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 5000 {
			return
		}
		out := escape(s, max)
		if width(out) > max || !utf8.ValidString(out) {
			t.Fatalf("escape(%q, %d) = %q (%d wide)", s, max, out, width(out))
		}
		if n := len(out); n > 0 && out[n-1] == '\\' && (n < 2 || out[n-2] != '\\') {
			t.Fatalf("escape(%q, %d) ends in a lone backslash: %q", s, max, out)
		}
	})
}
