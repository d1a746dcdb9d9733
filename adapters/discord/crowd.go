package discord

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A crowded card (a batch of many calls, calls with long arguments, a
// long question, tools with long names) cannot show every call's
// arguments whole in Discord's 2000 characters, nor every call's buttons
// in its five rows. A call whose buttons the card draws still shows its
// tool whole and a cut of its arguments that keeps their start and end
// and names the command that prints them whole (card.CutMiddle with room
// for its long line): Approve approves what the card shows. The question
// and the card's other texts give way first, down to minKey, and a
// batch's decided calls, each to a line of its verdict; then the last
// calls are left off the card whole, buttons and all, and the card says
// which and where to see and answer them; "Approve all", which would
// approve them unseen, goes too. "Deny all" and "Decline" stay: they
// approve nothing. As calls are decided, room frees and the card,
// edited, shows the others.

// minKey is the least the question and the card's other texts are cut to
// before a call with buttons is left off: a question cut to an ellipsis
// would not say what Approve is for.
const minKey = 16

// showCommand is what card.CutMiddle's long line names: the command that
// prints question id's calls whole.
func showCommand(id core.QuestionID) string { return "askbridge show " + string(id) }

// approves reports whether a button of ref r approves a call.
func approves(r core.Ref) bool {
	return r.Action == core.RefApprove || r.Action == core.RefEdit || r.Action == core.RefStanding
}

// openContent is an open card's text and off, the section indexes of the
// calls with buttons it leaves off: on a batch, those the rows cannot
// hold, and then, the last first, those whose arguments cannot show
// their floor (floorOf) while the card's texts keep minKey. A batch's
// decided calls give way to them, each to a line of its verdict
// (withDecided), and are shown whole again, the first first, while the
// card's texts keep minShown.
func openContent(c card.Card) (string, []int) {
	parts := cardParts(c, keepLines)
	decided := dropping(parts)
	calls, over := callsWithButtons(c)
	segs := func(buttoned, shown int) ([]seg, []int) {
		off := slices.Sorted(slices.Values(append(slices.Clone(calls[buttoned:]), over...)))
		return withDecided(c, withOff(c, parts, off), shown), off
	}
	try := func(buttoned, shown int) (string, int, []int) {
		ss, off := segs(buttoned, shown)
		out, got := fitCap(ss, maxContent)
		return out, got, off
	}
	if ss, off := segs(len(calls), decided); len(calls) == 0 || width(joinAt(ss, maxContent)) <= maxContent {
		out, _ := fitCap(ss, maxContent)
		return out, off // no call's arguments to keep, or all whole
	}
	setFloors(parts, calls)
	// Whether a plan keeps the card's texts at cap is one join away
	// (joinAt).
	keeps := func(buttoned, shown, cap int) bool {
		ss, _ := segs(buttoned, shown)
		return width(joinAt(ss, cap)) <= maxContent
	}
	buttoned := max(most(len(calls), func(n int) bool { return keeps(n, 0, minKey) }), 0)
	shown := max(most(decided, func(n int) bool { return keeps(buttoned, n, minShown) }), 0)
	out, _, off := try(buttoned, shown)
	return out, off
}

// withOff is parts, a card's head, sections and tail (cardParts),
// without the calls off (section indexes), and before the tail the line
// that names the calls whose arguments are too long to edit here and
// the one that names the calls left off (offNote).
func withOff(c card.Card, parts []part, off []int) []part {
	out := make([]part, 0, len(parts)+2)
	for _, p := range parts[:len(parts)-1] {
		if p.sect == 0 || !slices.Contains(off, p.sect-1) {
			out = append(out, p)
		}
	}
	if l := tooLongLine(c, off); l != "" {
		out = append(out, part{segs: []seg{fixed(l)}})
	}
	if len(off) > 0 {
		out = append(out, part{segs: []seg{fixed(offNote(c, off))}})
	}
	return append(out, parts[len(parts)-1])
}

// setFloors sets the floor (floorOf) of the arguments of each of the calls
// (section indexes) among parts.
func setFloors(parts []part, calls []int) {
	for _, p := range parts {
		if p.sect == 0 || !slices.Contains(calls, p.sect-1) {
			continue
		}
		for k := range p.segs {
			if p.segs[k].code {
				p.segs[k].floor = floorOf(p.segs[k])
			}
		}
	}
}

// callsWithButtons are the section indexes of c's calls with buttons:
// those the card has rows for, and over, on a batch, those whose buttons
// the rows its own buttons leave cannot hold, each call's buttons whole.
func callsWithButtons(c card.Card) (calls, over []int) {
	slots := -1 // no limit but a batch's
	if isBatch(c) {
		own := len(buttons(c.Actions))
		slots = (maxRows - (own+maxButtonsPerRow-1)/maxButtonsPerRow) * maxButtonsPerRow
	}
	for i, s := range c.Sections {
		if s.Kind != card.SectionCall {
			continue
		}
		n := len(buttons(s.Actions))
		switch {
		case n == 0:
		case slots >= 0 && (n > slots || len(over) > 0):
			over = append(over, i)
		default:
			calls = append(calls, i)
			if slots >= 0 {
				slots -= n
			}
		}
	}
	return calls, over
}

// floorOf is the least that s, a call's arguments in a code block, may
// be cut to: the narrowest cut that names showCommand (a narrower one
// has a count or a bare ellipsis in its middle, and says nowhere how to
// read the rest), or the whole when it is narrower. A cut names it once
// its room holds CutMiddle's long line twice, so the search is a
// bisection, from twice the command's width.
func floorOf(s seg) int {
	show := showCommand(s.call)
	whole := width(s.render(s.max))
	enough := func(n int) bool { return n >= whole || strings.Contains(s.render(n), show) }
	lo, hi := min(2*width(show), whole)-1, whole // the floor is in (lo, hi]
	for lo+1 < hi {
		if mid := (lo + hi) / 2; enough(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// offNote is the line that says which calls (off, section indexes of c)
// a card leaves off, that they have no buttons on it, and how to see and
// answer them instead.
func offNote(c card.Card, off []int) string {
	nums := make([]string, 0, len(off))
	for _, i := range off {
		nums = append(nums, strconv.Itoa(c.Sections[i].Index+1))
	}
	// what is left off, and the words that refer to it
	what, it, has, obj := "The call is", "it does", "it has", "it"
	switch n := len(nums); {
	case n > 1:
		what = "Calls " + strings.Join(nums[:n-1], ", ") + " and " + nums[n-1] + " are"
		it, has, obj = "they do", "they have", "them"
	case c.Progress != nil: // one call of a batch
		what = "Call " + nums[0] + " is"
	}
	var all []string
	for _, a := range c.Actions {
		if approves(a.Ref) {
			all = append(all, `"`+a.Label+`"`)
		}
	}
	nor := ""
	if len(all) > 0 {
		nor = ", nor has " + strings.Join(all, " or ")
	}
	return fmt.Sprintf("\n\n⚠️ %s not shown here: %s not fit in one Discord message, so %s no buttons here%s. "+
		"See and answer %s with `%s` or in the console.", what, it, has, nor, obj, showCommand(c.QuestionID))
}
