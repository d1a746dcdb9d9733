package teams

import (
	"math"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core/card"
)

// maxMentions is the most people a reminder @mentions; it names how
// many more it left out. Microsoft publishes no count: its limits
// page (learn.microsoft.com/microsoftteams/limits-specifications-teams)
// says only that @-mentions count towards a post's ~28 KB, and
// posting more than 20 @mentions in one message is refused with an
// error (MicrosoftDocs/OfficeDocs-SkypeForBusiness#10285, found by
// trial, closed as a doc bug).
const maxMentions = 20

// Reminder renders a reminder (card.NewReminder) as a small card whose
// "Waiting for" line mentions (by AAD object id) who has not acted yet:
// the first maxMentions of them, and how many more.
func Reminder(c card.Card) AdaptiveCard {
	s := card.ReminderHeading
	if !c.Meta.Deadline.IsZero() {
		s += " (answer by " + c.Meta.Deadline.UTC().Format(timeLayout) + ")"
	}
	body := []Element{words(s, bold)}
	for _, m := range c.Markers {
		if m != card.MarkerReminder && m.Warning() {
			body = append(body, words(m.Text(), bold, func(e Element) { e["color"] = "attention" }))
		}
	}
	body = append(body, plain(c.Heading+" from "+string(c.Meta.Agent)+": "+textlimit.FirstLine(c.Text), 400), words("`"+string(c.QuestionID)+"`", subtle)) // askbridge's own id
	var who []string
	var ents []Entity
	for _, m := range c.Mentions {
		if !m.Safe() || m.Role {
			continue
		}
		name := m.Name
		if name == "" {
			name = m.ID
		}
		tag := "<at>" + cut(textlimit.OneLine(name), 64) + "</at>"
		who = append(who, tag)
		ents = append(ents, Entity{Type: "mention", Text: tag, Mentioned: &Account{ID: m.ID, Name: name}})
	}
	if len(who) > 0 {
		// The first maxMentions, each tag with its entity, and how many
		// more; maxMentions tags of at most 64 runes keep the card small.
		names, n := textlimit.Runes.JoinFit(who[:min(len(who), maxMentions)], ", ", len(who), math.MaxInt32)
		ents = ents[:n]
		body = append(body, words(card.AwaitingLabel+": "+names))
	}
	card := newCard(body)
	if len(ents) > 0 {
		card.MSTeams["entities"] = ents
	}
	return card
}
