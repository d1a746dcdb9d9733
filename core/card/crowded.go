package card

import (
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// A crowded card (a batch of many calls, calls with long arguments, a
// long question) cannot show every call's arguments whole in one chat
// message. A call whose buttons a card draws still shows a cut of them
// that keeps their start and end and names the command that prints them
// whole (CutMiddle with room for its long line, NamedCutFloor): Approve
// approves what the card shows. Where even those cuts do not all fit,
// the renderer leaves the last calls off whole, buttons and all, and the
// card says which and where to see and answer them (Unseen); the card's
// own buttons that would approve them unseen ("Approve all") go too
// (Approves). "Deny all" and "Decline" stay: they approve nothing.

// ShowCommand is the command that prints question id whole: what
// CutMiddle's long line and Unseen's note name.
func ShowCommand(id core.QuestionID) string { return "askbridge show " + string(id) }

// NamedCutFloor is the least room in which CutMiddle, measuring with
// width, shows body whole or cut with its long line (which names
// ShowCommand(id)): a narrower cut has a bare count or ellipsis in its
// middle and says nowhere how to read the rest. whole is body written
// whole as the renderer measures it, the floor at most. CutMiddle takes
// the long line where the room holds it twice, so that is the floor,
// unless the body is whole in so small a room.
func NamedCutFloor(body string, id core.QuestionID, width Width, whole int) int {
	if width == nil {
		width = func(rune) int { return 1 }
	}
	if id == "" {
		return whole // CutMiddle names no command
	}
	rs := []rune(body)
	// CutMiddle measures the line with every rune counted as left out.
	if named := 2 * widthOf([]rune(longLine(len(rs), id)), width); named < min(whole, widthOf(rs, width)) {
		return named
	}
	return whole
}

// Approves reports whether a button of ref r approves a call: approve,
// edit and approve, or approve with a standing approval.
func Approves(r core.Ref) bool {
	return r.Action == core.RefApprove || r.Action == core.RefEdit || r.Action == core.RefStanding
}

// ApprovingLabels are the labels of c's own buttons that approve (every
// call still undecided, on a batch): with a call left off the card, they
// would approve it unseen.
func ApprovingLabels(c Card) []string {
	var out []string
	for _, a := range c.Actions {
		if Approves(a.Ref) {
			out = append(out, a.Label)
		}
	}
	return out
}

// Unseen is the note of a card that leaves calls off.
type Unseen struct {
	// Calls are the numbers of the calls left off, as the card numbers
	// them (from 1).
	Calls []int
	// Batch is whether the card is a batch's (a lone call is "the call").
	Batch bool
	// Platform names where they do not fit: "one Slack message".
	Platform string
	// Approving are the card's own buttons that approve, as the renderer
	// writes their labels (ApprovingLabels, marked up); they go too.
	Approving []string
	// Command is ShowCommand as the renderer writes it (as code).
	Command string
}

// Note is the sentence: which calls are not shown, that they have no
// buttons on the card, nor have the card's approving buttons, and how to
// see and answer them instead.
func (u Unseen) Note() string {
	nums := make([]string, 0, len(u.Calls))
	for _, n := range slices.Sorted(slices.Values(u.Calls)) {
		nums = append(nums, strconv.Itoa(n))
	}
	// what is left off, and the words that refer to it
	what, its, does, has, obj := "The call is", "its", "it does", "it has", "it"
	switch n := len(nums); {
	case n > 1:
		what = "Calls " + strings.Join(nums[:n-1], ", ") + " and " + nums[n-1] + " are"
		its, does, has, obj = "their", "they do", "they have", "them"
	case u.Batch && n == 1:
		what = "Call " + nums[0] + " is"
	}
	s := "⚠️ " + what + " not shown here: with " + its + " arguments " + does + " not fit in " + u.Platform +
		", so " + has + " no buttons here"
	if len(u.Approving) > 0 {
		s += ", nor has " + strings.Join(u.Approving, " or ")
	}
	s += ". See and answer " + obj + " with " + u.Command + " or in the console"
	if u.Batch {
		s += "; deciding the calls above makes room for " + obj + " here"
	}
	return s + "."
}
