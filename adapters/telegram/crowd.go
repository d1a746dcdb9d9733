package telegram

import (
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A crowded card (a batch of many calls, calls with long arguments, a
// long question) cannot show every call's arguments whole. A call whose
// buttons the card draws still shows a cut of them that keeps their
// start and end and names the command that prints them whole
// (card.CutMiddle with room for its long line): Approve approves what
// the card shows. Where even those cuts do not all fit, the last calls
// are left off the card whole, buttons and all, and the card says which
// and where to see and answer them; "Approve all", which would approve
// them unseen, goes too. No button approves arguments the card hides.

// showCommand is what card.CutMiddle's long line names: the command
// that prints question id's calls whole.
func showCommand(id core.QuestionID) string { return "askbridge show " + string(id) }

// floorOf is the least that p, a call's arguments with buttons, may be
// cut to: the narrowest cut that names showCommand (a narrower one has a
// count or a bare ellipsis in its middle, and says nowhere how to read
// the rest), or the whole when it is narrower. A cut names it once its
// room holds CutMiddle's long line twice, so the search is a bisection,
// from twice the command's width; the escaping after the cut (p.esc)
// neither cuts nor changes the command, so it is left out.
func floorOf(p piece) int {
	show := showCommand(p.id)
	names := func(n int) bool { return strings.Contains(card.CutMiddle(p.s, n, p.id, preWidth), show) }
	lo, hi := min(2*units(show), p.want)-1, p.want // the floor is in (lo, hi]
	for lo+1 < hi {
		if mid := (lo + hi) / 2; names(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// buttoned marks ps, the pieces of section i, a call whose buttons the
// card draws: its arguments are needed, and it is left out whole if they
// cannot show (layout).
func buttoned(ps []piece, i int) {
	for k := range ps {
		ps[k].sect = i + 1
		ps[k].need = ps[k].call
	}
}

// layout writes ps, a card's measured body, into d as fit plans them,
// first leaving out whole, the last first, each call with buttons that
// keeps the plan from fitting, and a note at the end that names them. It
// returns their section indexes.
func (d *doc) layout(c card.Card, ps []piece) []int {
	var out []int
	for {
		shown := slices.DeleteFunc(slices.Clone(ps), func(p piece) bool { return slices.Contains(out, p.sect-1) })
		if len(out) > 0 {
			shown = append(shown, markupPiece(unseenNote(c, out)))
		}
		caps, ok := fit(shown, d.left)
		last := 0
		for _, p := range shown {
			if p.need {
				last = max(last, p.sect)
			}
		}
		if ok || last == 0 {
			d.write(shown, caps, ok)
			return out
		}
		out = append(out, last-1)
	}
}

// unseenNote is the line that says which calls (out, section indexes of
// c) a card leaves out, that they have no buttons on it, and how to see
// and answer them instead.
func unseenNote(c card.Card, out []int) string {
	nums := make([]string, 0, len(out))
	for _, i := range slices.Sorted(slices.Values(out)) {
		nums = append(nums, strconv.Itoa(c.Sections[i].Index+1))
	}
	// what is left out, and the words that refer to it
	what, its, it, has, obj := "The call is", "its", "it does", "it has", "it"
	switch n := len(nums); {
	case n > 1:
		what = "Calls " + strings.Join(nums[:n-1], ", ") + " and " + nums[n-1] + " are"
		its, it, has, obj = "their", "they do", "they have", "them"
	case c.Progress != nil: // one call of a batch
		what = "Call " + nums[0] + " is"
	}
	nor := ""
	if all := approvesAll(c); len(all) > 0 {
		nor = ", nor has " + strings.Join(all, " or ")
	}
	return fmt.Sprintf("\n\n⚠️ %s not shown here: with %s arguments %s not fit in one Telegram message, so %s no buttons here%s. "+
		"See and answer %s with <code>%s</code> or in the console.",
		what, its, it, has, nor, obj, html.EscapeString(showCommand(c.QuestionID)))
}

// approvesAll are the labels of c's own buttons that approve (every
// call still undecided, on a batch): with a call left out, they would
// approve it unseen.
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

// leftOff adds to off, the keyboard's left-out buttons, those of the
// calls out (section indexes of c) and c's own that approve them all.
func leftOff(c card.Card, off map[core.Ref]bool, out []int) map[core.Ref]bool {
	if len(out) == 0 {
		return off
	}
	all := map[core.Ref]bool{}
	for r := range off {
		all[r] = true
	}
	for _, i := range out {
		for _, a := range c.Sections[i].Actions {
			all[a.Ref] = true
		}
	}
	for _, a := range c.Actions {
		if approves(a.Ref) {
			all[a.Ref] = true
		}
	}
	return all
}
