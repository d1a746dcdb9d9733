package telegram

import (
	"html"
	"regexp"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
)

// preBlocks are the escaped texts of a message's <pre> elements.
var preBlocks = regexp.MustCompile(`(?s)<pre>(.*?)</pre>`)

// TestLongCallShowsItsEnd: a call's arguments too long for the card keep
// their end (the pipe to a shell, the sandbox key after the command) and
// say how many characters were left out, counted right, and where to
// read the whole call, on an approval and on each call of a batch, the
// message within Telegram's limit; before, <pre> showed only their
// start, cut with "…", and Approve approved what it hid. The steps are
// full of what HTML escapes.
func TestLongCallShowsItsEnd(t *testing.T) {
	call := adaptertest.LongCall("./step.sh <in >out @ops && ", 90)
	for name, q := range adaptertest.LongCallQuestions(approval, call) {
		t.Run(name, func(t *testing.T) {
			rendered(t, cardOf(q)) // Telegram's checks of the wire
			m, err := RenderCard(cardOf(q), -1001)
			if err != nil {
				t.Fatal(err)
			}
			if n := units(m.Text); n > MaxText {
				t.Fatalf("the text is %d units", n)
			}
			blocks := preBlocks.FindAllStringSubmatch(m.Text, -1)
			if len(blocks) != max(len(q.Calls), 1) {
				t.Fatalf("%d <pre> in\n%s", len(blocks), m.Text)
			}
			for _, b := range blocks {
				adaptertest.CheckCutCall(t, call, q.ID, html.UnescapeString(b[1]))
			}
		})
	}
}
