package telegram

import (
	"html"
	"slices"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A crowded card (a batch of many calls, calls with long arguments, a
// long question) cannot show every call's arguments whole. A call whose
// buttons the card draws still shows its tool whole and a cut of its
// arguments that keeps their start and end and names the command that
// prints them whole (card.CutMiddle with room for its long line):
// Approve approves what the card shows. Where even those cuts do not all fit, the last calls
// are left off the card whole, buttons and all, and the card says which
// and where to see and answer them; "Approve all", which would approve
// them unseen, goes too. No button approves arguments the card hides.

// floorOf is the least that p, a call's arguments with buttons, may be
// cut to: the narrowest cut that names the command that prints it whole
// (card.NamedCutFloor), measured as pre writes it; the escaping after
// the cut (p.esc) neither cuts nor changes the command, so it is left
// out.
func floorOf(p piece) int { return card.NamedCutFloor(p.s, p.id, preWidth, p.want) }

// buttoned marks ps, the pieces of section i, a call whose buttons the
// card draws: its tool (whole) and its arguments (at least at their
// floor) are needed, and it is left out whole if they cannot show
// (layout).
func buttoned(ps []piece, i int) {
	for k := range ps {
		ps[k].sect = i + 1
		ps[k].need = ps[k].call || ps[k].tool
	}
}

// maxToolUnits is the most a tool's name escaped can take: core.MaxToolLen
// runes, each at most five units (&amp;, &#34;, &#39;). A tool beside
// buttons that approve its call is written whole.
const maxToolUnits = 5 * core.MaxToolLen

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
// and answer them instead (card.Unseen).
func unseenNote(c card.Card, out []int) string {
	u := card.Unseen{Batch: c.Progress != nil, Platform: "one Telegram message", Approving: card.ApprovingLabels(c),
		Command: "<code>" + html.EscapeString(card.ShowCommand(c.QuestionID)) + "</code>"}
	for _, i := range out {
		u.Calls = append(u.Calls, c.Sections[i].Index+1)
	}
	for k, l := range u.Approving {
		u.Approving[k] = html.EscapeString(l)
	}
	return "\n\n" + u.Note()
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
		if card.Approves(a.Ref) {
			all[a.Ref] = true
		}
	}
	return all
}
