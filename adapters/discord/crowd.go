package discord

import (
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A crowded card (a batch of many calls, calls with long arguments, a
// long question, tools with long names) cannot show every call's
// arguments whole in Discord's 2000 characters, nor every call's buttons
// in its five rows. Those are two limits, kept apart. An undecided call
// the card's text shows is seen: its tool whole and its arguments whole
// or cut no shorter than card.NamedCutFloor (a cut that keeps their start
// and end and names the command that prints them whole). The question
// and the card's other texts give way first, down to minKey, and a
// batch's decided calls, each to a line of its verdict; only calls whose
// least cut still does not fit are left off the text, the last first,
// named in a note (card.Unseen) with where to see and answer them.
//
// Buttons follow what is seen: each seen call has its own while the rows
// hold them, and the seen calls the rows cannot hold are named in a line
// that says how to decide them instead (unbuttonedLine). "Approve all"
// stays exactly while every undecided call is seen, so no button approves
// arguments the card hides; "Deny all" and "Decline" always stay, they
// approve nothing. As calls are decided, room frees and the card, edited,
// shows and buttons the others.

// minKey is the least the question and the card's other texts are cut to
// before a call is left off: a question cut to an ellipsis would not say
// what Approve is for.
const minKey = 16

// openContent is an open card's text and off, the section indexes of the
// undecided calls it leaves off the text, unseen: the last first, those
// whose arguments cannot show their floor (floorOf) while the card's
// texts keep minKey. A batch's decided calls give way to the undecided,
// each to a line of its verdict (withDecided), and are shown whole
// again, the first first, while the card's texts keep minShown.
func openContent(c card.Card) (string, []int) {
	parts := cardParts(c, keepLines)
	decided := dropping(parts)
	calls := undecidedCalls(c)
	segs := func(seen, shown int) []seg { return withDecided(c, withOff(c, parts, calls[seen:]), shown) }
	if ss := segs(len(calls), decided); len(calls) == 0 || width(joinAt(ss, maxContent)) <= maxContent {
		out, _ := fitCap(ss, maxContent)
		return out, nil // no call's arguments to keep, or all whole
	}
	setFloors(parts, calls)
	// Whether a plan keeps the card's texts at cap is one join away
	// (joinAt).
	keeps := func(seen, shown, cap int) bool { return width(joinAt(segs(seen, shown), cap)) <= maxContent }
	seen := max(textlimit.Most(len(calls), func(n int) bool { return keeps(n, 0, minKey) }), 0)
	shown := max(textlimit.Most(decided, func(n int) bool { return keeps(seen, n, minShown) }), 0)
	out, _ := fitCap(segs(seen, shown), maxContent)
	return out, calls[seen:]
}

// undecidedCalls are the section indexes of an open card's calls still
// to decide: those its text must show seen, or leave off.
func undecidedCalls(c card.Card) []int {
	if c.Outcome != nil {
		return nil
	}
	var out []int
	for i, s := range c.Sections {
		if s.Kind == card.SectionCall && s.Answer == nil {
			out = append(out, i)
		}
	}
	return out
}

// withOff is parts, a card's head, sections and tail (cardParts),
// without the calls off (section indexes), and before the tail the lines
// that name the calls whose arguments are too long to edit here, the
// seen calls without buttons of their own (unbuttonedLine), and the
// calls left off (unseenNote).
func withOff(c card.Card, parts []part, off []int) []part {
	out := make([]part, 0, len(parts)+3)
	for _, p := range parts[:len(parts)-1] {
		if p.sect == 0 || !slices.Contains(off, p.sect-1) {
			out = append(out, p)
		}
	}
	for _, l := range []string{tooLongLine(c, off), unbuttonedLine(c, off)} {
		if l != "" {
			out = append(out, part{segs: []seg{fixed(l)}})
		}
	}
	if len(off) > 0 {
		out = append(out, part{segs: []seg{fixed(unseenNote(c, off))}})
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

// floorOf is the least that s, a call's arguments in a code block, may
// be cut to and the call still be seen: card.NamedCutFloor within the
// fences, measured as codeBlock writes it, or the whole (at s's own cap)
// when that is narrower.
func floorOf(s seg) int {
	whole := 0
	for _, r := range s.text { // an invalid byte reads as U+FFFD, as CutMiddle reads it
		whole += codeWidth(r)
	}
	return codeFences + card.NamedCutFloor(s.text, s.call, codeWidth, min(whole, s.max-codeFences))
}

// callButtons are the section indexes of c's seen calls (undecided, not
// off) whose buttons the card draws: on a batch, each call's buttons
// whole, the first first, while the rows the card's own buttons leave
// hold them; elsewhere every one that has buttons.
func callButtons(c card.Card, off []int) []int {
	slots := -1 // no limit but a batch's
	if isBatch(c) {
		own := len(ownButtons(c, off))
		slots = (maxRows - (own+maxButtonsPerRow-1)/maxButtonsPerRow) * maxButtonsPerRow
	}
	var out []int
	for _, i := range undecidedCalls(c) {
		n := len(buttons(c.Sections[i].Actions))
		if n == 0 || slices.Contains(off, i) || (slots >= 0 && n > slots) {
			continue
		}
		out = append(out, i)
		if slots >= 0 {
			slots -= n
		}
	}
	return out
}

// unbuttonedLine is the line that names the seen calls of c (undecided,
// not off) that have no buttons of their own, the rows being full, and
// says how to decide them: with the card's own buttons that decide every
// call, or with askbridge show; "" if none. It is brief: it costs the
// room the calls' arguments share.
func unbuttonedLine(c card.Card, off []int) string {
	with := callButtons(c, off)
	var nums []int
	for _, i := range undecidedCalls(c) {
		if !slices.Contains(off, i) && !slices.Contains(with, i) {
			nums = append(nums, c.Sections[i].Index+1)
		}
	}
	if len(nums) == 0 {
		return ""
	}
	what := "The call has no buttons here"
	switch {
	case len(nums) > 1:
		what = "Calls " + numbersSaid(nums) + " have no buttons of their own"
	case c.Progress != nil:
		what = "Call " + numbersSaid(nums) + " has no buttons of its own"
	}
	var by []string
	for _, a := range ownActions(c, off) {
		if a.Ref.Item < 0 && (a.Ref.Action == core.RefApprove || a.Ref.Action == core.RefDeny) && len(buttons([]card.Action{a})) > 0 {
			by = append(by, "**"+a.Label+"**")
		}
	}
	how := "`" + card.ShowCommand(c.QuestionID) + "`"
	if len(by) > 0 {
		how = strings.Join(by, " or ") + ", or " + how
	}
	return "\n\nℹ️ " + what + ": use " + how + "."
}

// numbersSaid are nums, ascending, as a reader takes them in: runs of
// consecutive numbers as ranges ("3, 5 and 11–20").
func numbersSaid(nums []int) string {
	var said []string
	for k := 0; k < len(nums); {
		j := k
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		s := strconv.Itoa(nums[k])
		if j > k {
			s += "–" + strconv.Itoa(nums[j])
		}
		said = append(said, s)
		k = j + 1
	}
	if n := len(said); n > 1 {
		return strings.Join(said[:n-1], ", ") + " and " + said[n-1]
	}
	return said[0]
}

// unseenNote is the line that says which calls (off, section indexes of
// c) a card leaves off, that they have no buttons on it, nor has its own
// button that would approve them unseen, and how to see and answer them
// instead (card.Unseen).
func unseenNote(c card.Card, off []int) string {
	u := card.Unseen{Batch: c.Progress != nil, Platform: "one Discord message",
		Command: "`" + card.ShowCommand(c.QuestionID) + "`"}
	for _, i := range off {
		u.Calls = append(u.Calls, c.Sections[i].Index+1)
	}
	for _, l := range card.ApprovingLabels(c) {
		u.Approving = append(u.Approving, "**"+l+"**")
	}
	return "\n\n" + u.Note()
}
