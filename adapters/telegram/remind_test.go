package telegram

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestReminderOfABigRouteNamesSomeAndCountsTheRest: a reminder calling on
// 250 people names as many as fit in the message, each whole, says how
// many more there are, and keeps what follows them (where to answer when
// the card is not in the chat). Before, the line of names went in whole
// or not at all: past 4096 characters nobody was named, nothing said so,
// and the lines after it were dropped too.
func TestReminderOfABigRouteNamesSomeAndCountsTheRest(t *testing.T) {
	link := regexp.MustCompile(`<a href="tg://user\?id=\d+">[^<]*</a>`)
	more := regexp.MustCompile(`…and (\d+) more`)
	const n = 250
	for _, alone := range []bool{false, true} {
		c := card.Card{QuestionID: "01J0000000000000000000000Q", Kind: core.KindDecision, Heading: "Decision needed", Text: "Which database?"}
		if !alone {
			c.ReplyTo = &core.MessageRef{Room: "1", ID: "7"}
		}
		for i := range n {
			c.Mentions = append(c.Mentions, core.Mention{ID: fmt.Sprintf("80351110%02d", i), Name: fmt.Sprintf("Person number %03d", i)})
		}
		name := fmt.Sprintf("without the card: %t", alone)
		txt := RenderReminder(c, 1).Text
		if w := units(txt); w > MaxText {
			t.Fatalf("%s: %d units", name, w)
		}
		_, who, ok := strings.Cut(txt, card.AwaitingLabel+": ")
		if !ok {
			t.Fatalf("%s: no one is called on:\n%s", name, txt)
		}
		named := len(link.FindAllString(who, -1))
		g := more.FindStringSubmatch(who)
		if named == 0 || g == nil || g[1] != fmt.Sprint(n-named) {
			t.Fatalf("%s: names %d, and says %q of the rest", name, named, g)
		}
		if alone && !strings.Contains(txt, "card was not found here") {
			t.Fatalf("%s: where to answer was dropped:\n…%s", name, txt[len(txt)-200:])
		}
	}
}
