package slack

import (
	"encoding/json"
	"strings"

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
// with buttons keeps its tool whole and its arguments are never cut
// below the cut that names askbridge show (crowd.go), since Approve
// approves what the card shows. A batch of many calls, each with its
// buttons and those cuts, may still not fit with every other text cut as
// far as it goes: then it keeps as many of its undecided calls as fit,
// in order, and leaves the others off whole, with "Approve all", saying
// which they are and where to see and answer them.
func Card(c card.Card) Message {
	fl := &floors{id: c.QuestionID, of: map[int]int{}}
	undecided := undecidedCalls(c)
	at := func(div, calls int) (Message, bool) {
		m := render(c, fit{div: div, calls: calls, floors: fl})
		return m, blocksLen(m.Blocks) <= maxBlocksJSON
	}
	if m, ok := at(1, undecided); ok {
		return m
	}
	// The most undecided calls that keep their buttons with every other
	// text cut as far as it goes (the question gives way before a call
	// does): fewer calls never take more room. at(maxDiv, hi) is too
	// long; at(maxDiv, lo) fits, once lo >= 0.
	calls, from := undecided, 2
	if _, ok := at(maxDiv, undecided); !ok {
		lo, hi := -1, undecided
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if _, ok := at(maxDiv, mid); ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		if lo < 0 {
			m, _ := at(maxDiv, 0)
			return m // cut as far as it goes
		}
		calls, from = lo, 1
	}
	// Then the least cut that keeps them.
	for div := from; div < maxDiv; div *= 2 {
		if m, ok := at(div, calls); ok {
			return m
		}
	}
	m, _ := at(maxDiv, calls)
	return m
}

// maxDiv is the most a card's text budgets are divided by to fit.
const maxDiv = 64

// fit is how much of a card a rendering keeps: its text budgets divided
// by div, and the first calls undecided calls of a batch (the others are
// left off, buttons and all); floors keeps the arguments of each call
// with buttons from being cut below what names askbridge show.
type fit struct {
	div    int
	calls  int
	floors *floors
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

// undecidedCalls counts a batch card's calls that still have buttons.
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
