package slack

import (
	"slices"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A crowded card (a batch of many calls, calls with long arguments, long
// tool names, a long question) cannot show every call's arguments whole.
// Every undecided call the card shows (a seen call) still shows its tool
// whole and a cut of its arguments that keeps their start and end and
// names the command that prints them whole (card.CutMiddle with room for
// its long line, card.NamedCutFloor): a button that approves it approves
// what the card shows. Being seen and having buttons of its own are two
// things: a call's own buttons (each ~150 characters of JSON) give way
// before its text does, the last calls' first, and a seen call without
// them says how to decide it instead (decideLine): "Approve all" and
// "Deny all" cover it, since the card shows it. Only a call whose least
// cut does not fit even without its buttons is left off the card whole;
// the card then says which and where to see and answer it (card.Unseen),
// and "Approve all", which would approve it unseen, goes too. "Deny all"
// and "Decline" stay: they approve nothing. As calls are decided, room
// frees and the card, edited, shows the others and their buttons. No
// button approves arguments the card hides.

// floors are the least room (for code) the arguments of each seen call of
// one card may be given, by the call's index: worked out the first time a
// rendering asks, and kept for the renderings Card tries after it.
type floors struct {
	id core.QuestionID
	of map[int]int
}

// atLeast is room, or the floor of s's arguments when room would cut
// them below it.
func (fl *floors) atLeast(s card.Section, room int) int {
	n, ok := fl.of[s.Index]
	if !ok {
		n = codeFloor(s.Body, fl.id)
		fl.of[s.Index] = n
	}
	return max(room, n)
}

// fences is the room a code block's fences take.
const fences = 6

// codeFloor is the least room for which code shows body whole or with the
// line naming card.ShowCommand(id): card.NamedCutFloor as code measures
// (codeWidth), with the fences. Code's escaping after the cut neither cuts
// nor changes the command, so it is measured, not applied.
func codeFloor(body string, id core.QuestionID) int {
	return card.NamedCutFloor(body, id, codeWidth, codeLen(body)) + fences
}

// unbuttonedBlock is the block_id of the note that names the calls a
// card leaves off (unseenNote).
const unbuttonedBlock = "calls-unbuttoned"

// unseenNote says which calls of c (out, by their indexes in the batch)
// a card leaves off, that they have no buttons on it, nor has "Approve
// all", and how to see and answer them instead: card.Unseen, in Slack's
// marks.
func unseenNote(c card.Card, out []int) string {
	nums := make([]int, len(out))
	for k, i := range out {
		nums[k] = i + 1
	}
	return card.Unseen{Calls: nums, Batch: c.Progress != nil, Platform: "one Slack message",
		Approving: bold(card.ApprovingLabels(c)), Command: showCode(c.QuestionID)}.Note()
}

// decideLine ends the text of a call that the card shows without its own
// buttons: how to decide it instead. own are the card's own actions;
// those that decide every undecided call ("Approve all", "Deny all")
// decide this one too, and askbridge show names every way to answer it.
func decideLine(id core.QuestionID, own []card.Action) string {
	var approve, deny []string
	for _, a := range own {
		switch {
		case a.Ref.Item >= 0 || a.Input == card.InputRequired:
		case card.Approves(a.Ref):
			approve = append(approve, a.Label)
		case a.Ref.Action == core.RefDeny:
			deny = append(deny, a.Label)
		}
	}
	s := "No room for its buttons: decide it with "
	switch {
	case len(approve) > 0:
		return s + strings.Join(bold(append(approve, deny...)), " or ") + ", or " + showCode(id) + "."
	case len(deny) > 0:
		return s + showCode(id) + ", or " + strings.Join(bold(deny), " or ") + "."
	}
	return s + showCode(id) + "."
}

// showCode is card.ShowCommand(id) as Slack marks a command: code.
func showCode(id core.QuestionID) string { return "`" + card.ShowCommand(id) + "`" }

// bold is labels as Slack marks a button's label in text: bold.
func bold(labels []string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = "*" + l + "*"
	}
	return out
}

// withoutApproving is as, less the actions that approve.
func withoutApproving(as []card.Action) []card.Action {
	return slices.DeleteFunc(slices.Clone(as), func(a card.Action) bool { return card.Approves(a.Ref) })
}
