package slack

import (
	"encoding/json"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// Card renders a card.Card: a question's first post (with its markers)
// and every later edit. An open question gets its buttons, each carrying
// only an encoded core.Ref; a closed one shows who closed it, how and
// when, and no buttons.
//
// Slack takes free text as a reply in the card's thread, so an action
// that collects text (a clarification's answer, a form item's own answer)
// draws no button: the card says to reply in the thread instead.
//
// Whatever the card, its blocks stay within maxBlocksJSON, open and
// closed alike: a card Slack refuses is never posted, and an edit it
// refuses leaves a closed question's buttons live. A card too long is
// rendered again with every text budget halved until it fits; but a call
// the card shows while it is undecided keeps its tool whole and its
// arguments are never cut below the cut that names askbridge show
// (crowd.go), since "Approve all", and its own Approve, approve what the
// card shows. A batch of many calls may still not fit with every other
// text cut as far as it goes: then the last calls give up their own
// buttons first, each saying how to decide it instead, and only calls
// that do not fit even so are left off whole, the card saying which
// they are and where to see and answer them; "Approve all" goes with
// them. Where some are left off, and "Approve all" cannot stay, calls
// with their own buttons come first: the most that fit so, then as many
// more as fit without.
func Card(c card.Card) Message {
	fl := &floors{id: c.QuestionID, of: map[int]int{}}
	undecided := undecidedCalls(c)
	at := func(div, seen, buttoned int) (Message, bool) {
		m := render(c, fit{div: div, seen: seen, buttoned: buttoned, floors: fl})
		return m, blocksLen(m.Blocks) <= maxBlocksJSON
	}
	if m, ok := at(1, undecided, undecided); ok {
		return m
	}
	// With every other text cut as far as it goes (the question gives
	// way before a call does), the most undecided calls the card shows
	// without any call's own buttons, then the most of those that keep
	// their buttons: a call seen or buttoned more never takes less room.
	seen, buttoned, from := undecided, undecided, 2
	if _, ok := at(maxDiv, undecided, undecided); !ok {
		fits := func(seen, buttoned int) bool { _, ok := at(maxDiv, seen, buttoned); return ok }
		seen = textlimit.Most(undecided, func(n int) bool { return fits(n, 0) })
		if seen < 0 {
			m, _ := at(maxDiv, 0, 0)
			return m // cut as far as it goes
		}
		buttoned = textlimit.Most(seen, func(n int) bool { return fits(seen, n) })
		if seen < undecided {
			// Some calls are left off, and "Approve all" with them, so a
			// call with its own buttons is worth more than one shown
			// without: the most calls that fit with their buttons, then
			// as many more as fit without.
			if b := textlimit.Most(undecided, func(n int) bool { return fits(n, n) }); b > buttoned {
				seen, buttoned = b+max(textlimit.Most(undecided-b, func(n int) bool { return fits(b+n, b) }), 0), b
			}
		}
		from = 1
	}
	// Then the least cut that keeps them.
	for div := from; div < maxDiv; div *= 2 {
		if m, ok := at(div, seen, buttoned); ok {
			return m
		}
	}
	m, _ := at(maxDiv, seen, buttoned)
	return m
}

// maxDiv is the most a card's text budgets are divided by to fit.
const maxDiv = 64

// fit is how much of a card a rendering keeps: its text budgets divided
// by div, the first seen undecided calls of a batch (the others are left
// off whole), and the first buttoned of those with their own buttons
// (the others say how to decide them instead); floors keeps the
// arguments of each seen call from being cut below what names askbridge
// show.
type fit struct {
	div      int
	seen     int
	buttoned int
	floors   *floors
}

// b is the text budget n as f keeps it: never below minBudget (nor
// above n).
func (f fit) b(n int) int { return max(n/f.div, min(n, minBudget)) }

// who is the budget of a name that says who decided or closed something
// (law 12): kept whole until only absurd texts are left to cut.
func (f fit) who(n int) int {
	if f.div < whoDiv {
		return n
	}
	return f.b(n)
}

const (
	minBudget = 24 // the least a text budget is cut to
	whoDiv    = 8  // from this div on, names are cut too
)

// undecidedCalls counts a batch card's undecided calls: those with
// buttons to draw, shown or not.
func undecidedCalls(c card.Card) int {
	if c.Progress == nil {
		return 0 // not a batch
	}
	n := 0
	for _, s := range c.Sections {
		if s.Kind == card.SectionCall && len(drawn(s.Actions)) > 0 {
			n++
		}
	}
	return n
}

// blocksLen is the size of blocks' JSON as Slack counts it towards
// msg_blocks_too_long: without Go's HTML escaping, in UTF-16 units.
func blocksLen(blocks []slack.Block) int {
	raw, err := json.Marshal(blocks)
	if err != nil {
		return 0
	}
	// slack-go's block types marshal themselves with HTML escaping.
	return textLen(htmlUnescaper.Replace(string(raw)))
}

var htmlUnescaper = strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">")
