package discord

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestReminderOfABigRouteNamesSomeAndCountsTheRest: a reminder calling on
// 120 or 250 people (some of them roles) names as many as fit in 2000
// characters and at most 100 ids each in allowed_mentions, notifies
// exactly those it names, says how many more there are, and keeps its
// footer. Short ids (3 digits) fit more than 100 in the content, so the
// cap on allowed_mentions is what stops them. Before, every id went into
// allowed_mentions (Discord refuses over 100) and the content was cut
// mid-mention.
func TestReminderOfABigRouteNamesSomeAndCountsTheRest(t *testing.T) {
	mention := regexp.MustCompile(`<@(&?)(\d+)>`)
	more := regexp.MustCompile(`…and (\d+) more`)
	for _, n := range []int{120, 250} {
		for _, tc := range []struct {
			text, id string
		}{
			{"Which database?", "8035111022467%05d"},
			{strings.Repeat("Which database? ", 100), "8035111022467%05d"},
			{"Which database?", "%03d"},
		} {
			c := card.Card{QuestionID: "01J0000000000000000000000Q", Heading: "Decision needed", Text: tc.text}
			for i := range n {
				c.Mentions = append(c.Mentions, core.Mention{ID: fmt.Sprintf(tc.id, i), Role: i%10 == 0})
			}
			m := RenderReminder(c)
			name := fmt.Sprintf("%d mentions like %s, %d characters of text", n, c.Mentions[1].ID, len(c.Text))
			if w := width(m.Content); w > maxContent {
				t.Fatalf("%s: content is %d wide", name, w)
			}
			if !strings.HasSuffix(m.Content, footer(string(c.QuestionID))) {
				t.Fatalf("%s: the footer was cut off: …%q", name, m.Content[len(m.Content)-60:])
			}
			if len(m.AllowedMentions.Users) > 100 || len(m.AllowedMentions.Roles) > 100 {
				t.Fatalf("%s: allowed_mentions holds %d users, %d roles", name, len(m.AllowedMentions.Users), len(m.AllowedMentions.Roles))
			}
			var users, roles []string
			for _, g := range mention.FindAllStringSubmatch(m.Content, -1) {
				if g[1] == "&" {
					roles = append(roles, g[2])
				} else {
					users = append(users, g[2])
				}
			}
			if !slices.Equal(users, m.AllowedMentions.Users) || !slices.Equal(roles, m.AllowedMentions.Roles) {
				t.Fatalf("%s: names %d users, %d roles; allows %d, %d", name, len(users), len(roles), len(m.AllowedMentions.Users), len(m.AllowedMentions.Roles))
			}
			g := more.FindStringSubmatch(m.Content)
			if g == nil || g[1] != fmt.Sprint(n-len(users)-len(roles)) {
				t.Fatalf("%s: names %d, and says %q of the rest", name, len(users)+len(roles), g)
			}
			t.Logf("%s: names %d, %s; %d wide", name, len(users)+len(roles), g[0], width(m.Content))
		}
	}
}
