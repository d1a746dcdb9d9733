package teams

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestReminderOfABigRouteMentionsAtMostTheCap: a reminder calling on more
// people than Teams takes mentions in one message (maxMentions) mentions
// the first maxMentions, each tag in the text matched by one entity and
// no entity without its tag, and says how many more it left out; a route
// within the cap is mentioned whole, with no "more". Roles (which Teams
// cannot mention) count in neither. Before, every person got a tag and an
// entity, and Teams refuses such a message.
func TestReminderOfABigRouteMentionsAtMostTheCap(t *testing.T) {
	tag := regexp.MustCompile(`<at>([^<]*)</at>`)
	more := regexp.MustCompile(`…and (\d+) more`)
	for _, n := range []int{3, maxMentions, maxMentions + 1, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := card.Card{QuestionID: "01J0000000000000000000000Q", Heading: "Decision needed", Text: "Which database?"}
			for i := range n {
				c.Mentions = append(c.Mentions, core.Mention{ID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), Name: fmt.Sprintf("Person %03d", i)})
			}
			c.Mentions = append(c.Mentions, core.Mention{ID: "leads", Role: true})
			rc := Reminder(c)
			var text string
			for _, e := range rc.Body {
				if s, _ := e["text"].(string); strings.HasPrefix(s, card.AwaitingLabel) {
					text = s
				}
			}
			var tags []string
			for _, g := range tag.FindAllStringSubmatch(text, -1) {
				tags = append(tags, g[0])
			}
			ents, _ := rc.MSTeams["entities"].([]Entity)
			var ids, texts []string
			for _, e := range ents {
				ids, texts = append(ids, e.Mentioned.ID), append(texts, e.Text)
			}
			want := min(n, maxMentions)
			if len(ents) != want || !slices.Equal(texts, tags) {
				t.Fatalf("%d entities for %d tags in %q, want %d of each, alike", len(ents), len(tags), text, want)
			}
			if ids[0] != c.Mentions[0].ID || ids[want-1] != c.Mentions[want-1].ID {
				t.Fatalf("mentions %v, want the first %d of the route", ids, want)
			}
			g := more.FindStringSubmatch(text)
			switch {
			case n <= maxMentions && g != nil:
				t.Fatalf("says %q of a route it mentions whole: %q", g[0], text)
			case n > maxMentions && (g == nil || g[1] != fmt.Sprint(n-maxMentions)):
				t.Fatalf("mentions %d of %d, and says %q of the rest: %q", want, n, g, text)
			}
		})
	}
}
