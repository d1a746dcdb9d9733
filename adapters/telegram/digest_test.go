package telegram

import (
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
)

// TestDigestSaysWhatItLeftOut: a digest whose lists are longer than one
// message, and longer than core reads (core.Digest's AskedMore and the
// like), lists what fits and says how many more it does not list, and
// gives a count that is a floor as one ("500 or more"), never as the
// count. Before, it said "Asked: 500" where more were asked, and its
// list stopped where the message was full, the closed questions and all,
// with no word that it had.
func TestDigestSaysWhatItLeftOut(t *testing.T) {
	qs := func(n int, prefix string) []*core.Question {
		var out []*core.Question
		for i := range n {
			q := decision()
			q.Text = fmt.Sprintf("%s %03d: %s", prefix, i+1, strings.Repeat("which database should the service use? ", 3))
			out = append(out, q)
		}
		return out
	}
	adaptertest.CheckCappedDigest(t, html.UnescapeString(RenderDigest(adaptertest.CappedDigest(), room).Text))
	open, closed := qs(80, "open"), qs(40, "closed")
	d := core.Digest{From: t0, To: t0.Add(3 * time.Hour), Asked: qs(500, "asked"), AskedMore: true,
		Closed: closed, Open: open, OpenMore: true}
	m := RenderDigest(d, room)
	checkWire(t, wire(t, m))
	if !strings.Contains(m.Text, "Asked: 500 or more · Closed: 40 · Still open: 80 or more") {
		t.Errorf("the counts read as exact:\n%s", m.Text)
	}
	listed := strings.Count(m.Text, "\n• ")
	more := regexp.MustCompile(`…and (\d+) or more not listed`).FindStringSubmatch(m.Text) // OpenMore: a floor
	if more == nil {
		t.Fatalf("%d of %d questions listed, and no word of the rest:\n%s", listed, len(open)+len(closed), m.Text)
	}
	if n, _ := strconv.Atoi(more[1]); listed+n != len(open)+len(closed) {
		t.Errorf("%d listed and %d more said, of %d", listed, n, len(open)+len(closed))
	}
}
