package discord

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
	"github.com/bwmarrin/discordgo"
)

// fixture reads one of Discord's documented payloads (copied beside the
// fake from the shared fixtures), with its custom_id swapped.
func fixture(t testing.TB, name, customID string) *discordgo.Interaction {
	t.Helper()
	raw, err := os.ReadFile("discordfake/fixtures/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if customID != "" {
		raw = []byte(strings.NewReplacer(`"click_one"`, `"`+customID+`"`, `"cool_modal"`, `"`+customID+`"`).Replace(string(raw)))
	}
	var i discordgo.Interaction
	if err := json.Unmarshal(raw, &i); err != nil {
		t.Fatal(err)
	}
	return &i
}

func TestParseButtonFixture(t *testing.T) {
	ref := core.Ref{QuestionID: core.NewID(0), Item: -1, Action: core.RefOption, Option: 1}
	in, err := parseInteraction(fixture(t, "discord-interaction-button.json", ref.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	want := core.Decider{Surface: core.SurfaceDiscord, ID: "53908232506183680", Name: "Mason", Roles: []string{"290926798626357999"}}
	if in.Submit || in.Ref != ref || !in.OnMessage || in.Decider.ID != want.ID || in.Decider.Name != want.Name ||
		!slices.Equal(in.Decider.Roles, want.Roles) || in.Decider.Surface != want.Surface {
		t.Fatalf("parsed %+v", in)
	}
	// The fixture as published carries a custom_id askbridge never wrote.
	if _, err := parseInteraction(fixture(t, "discord-interaction-button.json", "")); err == nil {
		t.Fatal("a foreign custom_id parsed")
	}
}

func TestParseModalFixture(t *testing.T) {
	ref := core.Ref{QuestionID: core.NewID(0), Item: -1, Action: core.RefText}
	i := fixture(t, "discord-interaction-modal-submit.json", ref.Encode())
	// The documented input is called "name"; askbridge reads only its own.
	if in, err := parseInteraction(i); err != nil || in.Text != "" || !in.Submit {
		t.Fatalf("parsed %+v %v", in, err)
	}
	d := i.Data.(discordgo.ModalSubmitInteractionData)
	d.Components[0].(*discordgo.ActionsRow).Components[0].(*discordgo.TextInput).CustomID = textInputID
	i.Data = d
	in, err := parseInteraction(i)
	if err != nil || in.Text != "John" || in.Ref != ref || in.OnMessage {
		t.Fatalf("parsed %+v %v", in, err)
	}
	// A modal whose custom_id is a ref that takes no text is not ours.
	opt := core.Ref{QuestionID: ref.QuestionID, Item: -1, Action: core.RefOption}
	d.CustomID = opt.Encode()
	i.Data = d
	if _, err := parseInteraction(i); err == nil {
		t.Fatal("a modal for an option button parsed")
	}
}

func TestParseRefusesOddShapes(t *testing.T) {
	ref := core.Ref{QuestionID: core.NewID(0), Item: -1, Action: core.RefApprove}.Encode()
	for name, i := range map[string]*discordgo.Interaction{
		"data nil (unparseable component)": {Type: discordgo.InteractionModalSubmit},
		"command":                          {Type: discordgo.InteractionApplicationCommand, Data: discordgo.ApplicationCommandInteractionData{Name: ref}},
		"select menu":                      {Type: discordgo.InteractionMessageComponent, Data: discordgo.MessageComponentInteractionData{CustomID: ref, ComponentType: discordgo.SelectMenuComponent}},
		"type and data disagree":           {Type: discordgo.InteractionModalSubmit, Data: discordgo.MessageComponentInteractionData{CustomID: ref, ComponentType: discordgo.ButtonComponent}},
		"ref with a trailing byte":         {Type: discordgo.InteractionMessageComponent, Data: discordgo.MessageComponentInteractionData{CustomID: ref + "x", ComponentType: discordgo.ButtonComponent}},
	} {
		if _, err := parseInteraction(i); core.ErrorCode(err) != core.CodeNotFound {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDeciderOf(t *testing.T) {
	nick := &discordgo.Interaction{Member: &discordgo.Member{Nick: "Ali", Roles: []string{"9"}, User: &discordgo.User{ID: "1", Username: "alice", GlobalName: "Alice"}}}
	if d := deciderOf(nick); d.ID != "1" || d.Name != "Ali" || !slices.Equal(d.Roles, []string{"9"}) {
		t.Fatalf("member: %+v", d)
	}
	dm := &discordgo.Interaction{User: &discordgo.User{ID: "2", Username: "bob"}}
	if d := deciderOf(dm); d.ID != "2" || d.Name != "bob" || d.Roles != nil {
		t.Fatalf("dm: %+v", d)
	}
	if d := deciderOf(&discordgo.Interaction{}); d.ID != "" || d.Surface != core.SurfaceDiscord {
		t.Fatalf("nobody: %+v", d)
	}
}

func TestTextHelpers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"*bold* _it_", 100, `\*bold\* \_it\_`},
		{"# head\n- item\n> quote\n-# sub", 100, "\\# head\n\\- item\n\\> quote\n\\-# sub"},
		{"mid # - > fine", 100, `mid # - \> fine`},
		{"@everyone <@1>", 100, `\@everyone \<\@1\>`},
		{"abcdef", 4, "abc…"},
		{"***", 4, `\*…`}, // an escape is never split
		{"🚀🚀🚀", 4, "🚀…"},  // an emoji is two UTF-16 units
		{"ok\xffok", 10, "ok\uFFFDok"},
	} {
		if got := escape(tc.in, tc.max); got != tc.want {
			t.Errorf("escape(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if got := cut("héllo wörld", 6); got != "héllo…" || width(got) > 6 {
		t.Errorf("cut: %q", got)
	}
	if got := oneLine(" a\n\tb  c "); got != "a b c" {
		t.Errorf("oneLine: %q", got)
	}
	if got := codeBlock("a```b", 100, "q1"); strings.Count(got, "```") != 2 || !utf8.ValidString(got) {
		t.Errorf("codeBlock: %q", got)
	}
}
