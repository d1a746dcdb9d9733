package telegram

import (
	"html"
	"regexp"
	"testing"
	"unicode"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// tdMentions mirrors tdlib's match_mentions (td/telegram/MessageEntity.cpp),
// which the Bot API applies to a sent text: an '@' not preceded by a word
// character (a letter, a number, or '_'), then 2-32 of [A-Za-z0-9_], not
// followed by a word character. A mention of a member's username notifies
// them.
func tdMentions(text string) []string {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }
	rs := []rune(text)
	var out []string
	for i, r := range rs {
		if r != '@' || (i > 0 && word(rs[i-1])) {
			continue
		}
		j := i + 1
		for j < len(rs) && rs[j] < 128 && (rs[j] == '_' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
			j++
		}
		if n := j - i - 1; n < 2 || n > 32 || (j < len(rs) && word(rs[j])) {
			continue
		}
		out = append(out, string(rs[i:j]))
	}
	return out
}

var tags = regexp.MustCompile(`<[^>]*>`)

// TestCardMentionsNobody: text an agent or a person wrote notifies nobody
// (escapeRune), on a whole card too: ".@cto_alice" in a question is a
// mention to Telegram, '.' being no word character to it.
func TestCardMentionsNobody(t *testing.T) {
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "agent-a", RunID: "r",
		Text: "Deploy now? cc.@cto_alice, or -@ops_team/@sre_lead: reach ops@example.com", Route: "ops", State: core.StateOpen}
	m, err := RenderCard(card.New(q, core.MessageRef{}), -100123)
	if err != nil {
		t.Fatal(err)
	}
	shown := html.UnescapeString(tags.ReplaceAllString(m.Text, ""))
	if got := tdMentions(shown); len(got) > 0 {
		t.Errorf("the card mentions %v (Telegram notifies them):\n%s", got, shown)
	}
	if !regexp.MustCompile(`reach ops@example\.com`).MatchString(shown) {
		t.Errorf("the e-mail address is not as written:\n%s", shown)
	}
}
