package slack

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// TestReminderOfABigRouteNamesSomeAndCountsTheRest: a reminder calling on
// 120 or 250 people (some of them user groups) names as many as fit in
// its one section's 3000 characters, each whole, and says how many more
// there are (120 fit; 250 do not). Before, all of them went in (250 are about 3800 characters)
// and Slack refused the reminder (invalid_blocks, permanent).
func TestReminderOfABigRouteNamesSomeAndCountsTheRest(t *testing.T) {
	mention := regexp.MustCompile(`<(@U|!subteam\^S)\d+>`)
	more := regexp.MustCompile(`…and (\d+) more$`)
	for _, n := range []int{120, 250} {
		for _, alone := range []bool{false, true} {
			c := card.Card{QuestionID: "01J0000000000000000000000Q", Heading: "Decision needed", Text: strings.Repeat("Which database? ", 50),
				Markers: []card.Marker{card.MarkerHardToReverse}, Meta: card.Meta{Agent: "agent", Deadline: t0.Add(time.Hour)}}
			if !alone {
				c.ReplyTo = &core.MessageRef{Room: "C0ROOM", ID: "1.000001"}
			}
			for i := range n {
				if i%10 == 0 {
					c.Mentions = append(c.Mentions, core.Mention{ID: fmt.Sprintf("S0%09d", i), Role: true})
				} else {
					c.Mentions = append(c.Mentions, core.Mention{ID: fmt.Sprintf("U0%09d", i)})
				}
			}
			m := Reminder(c)
			txt := m.Blocks[0].(*slack.SectionBlock).Text.Text
			name := fmt.Sprintf("%d mentions, without the card: %t", n, alone)
			if textLen(txt) > maxSectionText {
				t.Fatalf("%s: the section is %d characters", name, textLen(txt))
			}
			_, who, ok := strings.Cut(txt, card.AwaitingLabel+": ")
			if !ok {
				t.Fatalf("%s: no one is called on:\n%s", name, txt)
			}
			named := mention.FindAllString(who, -1)
			g, said := more.FindStringSubmatch(who), ""
			if g != nil {
				said = g[1]
			}
			if left := n - len(named); len(named) == 0 || strings.Count(who, "<") != len(named) || (left > 0) != (g != nil) || (left > 0 && said != fmt.Sprint(left)) {
				t.Fatalf("%s: names %d whole, and says %q more:\n%s", name, len(named), said, who)
			}
			t.Logf("%s: names %d, %q more; %d characters", name, len(named), said, textLen(txt))
		}
	}
}
