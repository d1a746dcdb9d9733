package card_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestNamedCutFloorIsTheLeastThatNamesShow: at the floor a cut names the
// command that prints the call whole, one unit less does not; arguments
// narrower than that are their own floor.
func TestNamedCutFloorIsTheLeastThatNamesShow(t *testing.T) {
	const id core.QuestionID = "aaaaaaaaaaaaaaaaa"
	body := strings.Repeat(`{"command":"make deploy && echo done"}`, 200)
	n := card.NamedCutFloor(body, id, nil, len(body))
	if !strings.Contains(card.CutMiddle(body, n, id, nil), card.ShowCommand(id)) {
		t.Fatalf("at the floor %d the cut does not name %q", n, card.ShowCommand(id))
	}
	if strings.Contains(card.CutMiddle(body, n-1, id, nil), card.ShowCommand(id)) {
		t.Fatalf("one under the floor %d the cut names the command: the floor is not the least", n)
	}
	if short := `{"a":1}`; card.NamedCutFloor(short, id, nil, len(short)) != len(short) {
		t.Fatal("short arguments are not their own floor")
	}
}

// TestNamedCutFloorIsTheLeastOfEveryRoom: the floor is the least room,
// of every room up to whole, whose cut names the command (or that holds
// the body whole as the renderer measures it), for bodies wider and
// narrower than the long line, runes of several widths, and a renderer
// that measures the whole body wider or narrower than width does.
func TestNamedCutFloorIsTheLeastOfEveryRoom(t *testing.T) {
	escapes := func(r rune) int { // as a renderer that escapes & and <, and counts UTF-16 units
		switch {
		case r == '&' || r == '<':
			return 5
		case r > 0xFFFF:
			return 2
		}
		return 1
	}
	for _, body := range []string{`{"a":1}`, strings.Repeat("x", 90), strings.Repeat("x", 200), strings.Repeat("a&<😀", 120)} {
		for _, id := range []core.QuestionID{"q1", "aaaaaaaaaaaaaaaaa", ""} {
			for _, width := range []card.Width{nil, escapes} {
				measured := 0
				for _, r := range body {
					if width == nil {
						measured++
					} else {
						measured += width(r)
					}
				}
				for _, whole := range []int{measured, measured - 30, measured + 30} {
					if whole < 1 {
						continue
					}
					least := whole
					for room := range whole {
						if id != "" && strings.Contains(card.CutMiddle(body, room, id, width), card.ShowCommand(id)) {
							least = room
							break
						}
					}
					if got := card.NamedCutFloor(body, id, width, whole); got != least {
						t.Errorf("body of %d runes, id %q, escapes %v, whole %d: floor %d, want %d",
							len([]rune(body)), id, width != nil, whole, got, least)
					}
				}
			}
		}
	}
}

// TestUnseenSaysWhatItLeavesOff: the note names the calls left off, says
// the card's approving buttons went with them, and where to answer them.
func TestUnseenSaysWhatItLeavesOff(t *testing.T) {
	got := card.Unseen{Calls: []int{18, 16, 17}, Batch: true, Platform: "one Slack message",
		Approving: []string{"*Approve all*"}, Command: "`askbridge show q1`"}.Note()
	want := "⚠️ Calls 16, 17 and 18 are not shown here: with their arguments they do not fit in one Slack message, so they have no buttons here, " +
		"nor has *Approve all*. See and answer them with `askbridge show q1` or in the console; deciding the calls above makes room for them here."
	if got != want {
		t.Errorf("note\n%q\nwant\n%q", got, want)
	}
	if got := (card.Unseen{Calls: []int{1}, Platform: "one Telegram message", Command: "askbridge show q1"}).Note(); !strings.HasPrefix(got, "⚠️ The call is not shown here: with its arguments it does not fit") || strings.Contains(got, "calls above") {
		t.Errorf("a lone call's note %q", got)
	}
}
