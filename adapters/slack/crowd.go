package slack

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A crowded card (a batch of many calls, calls with long arguments, long
// tool names, a long question) cannot show every call's arguments whole.
// A call whose buttons the card draws still shows its tool whole and a
// cut of its arguments that keeps their start and end and names the
// command that prints them whole (card.CutMiddle with room for its long
// line): Approve approves what the card shows. Where even those cuts do
// not fit with every other text cut as far as it goes, the last
// undecided calls are left off the card whole, buttons and all, and the
// card says which and where to see and answer them; "Approve all", which
// would approve them unseen, goes too. "Deny all" and "Decline" stay:
// they approve nothing. As calls are decided, room frees and the card,
// edited, shows the others. No button approves arguments the card hides.

// showCommand is what card.CutMiddle's long line names: the command that
// prints question id's calls whole.
func showCommand(id core.QuestionID) string { return "askbridge show " + string(id) }

// floors are the least room (for code) the arguments of each call of one
// card may be given while the call has buttons, by the call's index:
// worked out the first time a rendering asks, and kept for the renderings
// Card tries after it.
type floors struct {
	id core.QuestionID
	of map[int]int
}

// atLeast is room, or the floor of s's arguments when room would cut
// them below it.
func (fl *floors) atLeast(s card.Section, room int) int {
	n, ok := fl.of[s.Index]
	if !ok {
		n = floorOf(s.Body, fl.id)
		fl.of[s.Index] = n
	}
	return max(room, n)
}

// floorOf is the least room for which code shows body whole or with the
// line naming showCommand(id) (a narrower cut has a count or a bare
// ellipsis in its middle, and says nowhere how to read the rest). A cut
// names it once its room holds CutMiddle's long line twice, so the search
// is a bisection, from twice the command's width up to the whole (fences
// included); code's escaping after the cut neither cuts nor changes the
// command, so it is left out.
func floorOf(body string, id core.QuestionID) int {
	show := showCommand(id)
	whole := codeLen(body) + 6
	names := func(room int) bool {
		return room >= whole || strings.Contains(card.CutMiddle(body, room-6, id, codeWidth), show)
	}
	lo, hi := min(2*textLen(show)+6, whole)-1, whole // the floor is in (lo, hi]
	// The line is the command and a few dozen characters more: most
	// floors are under this, which saves a search up to the whole.
	if near := 2*textLen(show) + 6 + nearFloor; near < hi {
		if names(near) {
			hi = near
		} else {
			lo = near
		}
	}
	for lo+1 < hi {
		if mid := (lo + hi) / 2; names(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// nearFloor is how far above twice the command's width floorOf looks for
// the floor first.
const nearFloor = 160

// unbuttonedBlock is the block_id of the note that names the calls a
// card leaves off (unseenNote).
const unbuttonedBlock = "calls-unbuttoned"

// unseenNote says which calls of c (out, by their indexes in the batch)
// a card leaves off, that they have no buttons on it, nor has "Approve
// all", and how to see and answer them instead.
func unseenNote(c card.Card, out []int) string {
	nums := make([]string, 0, len(out))
	for _, i := range slices.Sorted(slices.Values(out)) {
		nums = append(nums, strconv.Itoa(i+1))
	}
	what, its, it, has, obj := "Call "+nums[0]+" is", "its", "it does", "it has", "it"
	if n := len(nums); n > 1 {
		what = "Calls " + strings.Join(nums[:n-1], ", ") + " and " + nums[n-1] + " are"
		its, it, has, obj = "their", "they do", "they have", "them"
	}
	nor := ""
	if all := approvesAll(c); len(all) > 0 {
		nor = ", nor has *" + strings.Join(all, "* or *") + "*"
	}
	return fmt.Sprintf("⚠️ %s not shown here: with %s arguments %s not fit in one Slack message, so %s no buttons here%s. "+
		"See and answer %s with `%s` or in the console; deciding the calls above makes room for %s here.",
		what, its, it, has, nor, obj, showCommand(c.QuestionID), obj)
}

// approvesAll are the labels of c's own buttons that approve (every call
// still undecided, on a batch): with a call left off, they would approve
// it unseen.
func approvesAll(c card.Card) []string {
	var out []string
	for _, a := range c.Actions {
		if approves(a.Ref) {
			out = append(out, a.Label)
		}
	}
	return out
}

// approves reports whether a button of ref r approves a call.
func approves(r core.Ref) bool {
	return r.Action == core.RefApprove || r.Action == core.RefEdit || r.Action == core.RefStanding
}

// withoutApproving is as, less the actions that approve.
func withoutApproving(as []card.Action) []card.Action {
	return slices.DeleteFunc(slices.Clone(as), func(a card.Action) bool { return approves(a.Ref) })
}
