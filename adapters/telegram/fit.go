package telegram

import (
	"cmp"
	"html"
	"slices"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A card's body is planned before it is written. Written in order into a
// doc, the first long texts would take the budget and every call, option
// or item after them would be left out, while the keyboard still drew
// their buttons: a person could approve a call the card did not show.
// So the body is pieces of three sorts, and fit shares the budget among
// them: every markup piece whole, every key piece at least in part, the
// long pieces evenly with what is left, the arguments of a call with
// buttons never below a cut that names askbridge show (crowd.go).

// pieceKind is how a piece of a card's body gives way when the body does
// not fit whole.
type pieceKind int

const (
	// pieceMarkup is trusted HTML that is written whole: a heading, a
	// recommended marker, a hash line.
	pieceMarkup pieceKind = iota
	// pieceKey is the question, or text that says what a button is for
	// (a tool, an option's title, an item's question or choice): always
	// written, cut evenly with the other key texts if they do not all fit.
	pieceKey
	// pieceLong is text that explains (arguments, write-ups,
	// descriptions): cut evenly with the other long texts to
	// what the markup and key texts leave, and left out when its share is
	// too small to say anything; but for a call's arguments beside its
	// buttons, which keep their floor (piece.need).
	pieceLong
)

// minLong is the least share worth showing of a long text that is cut.
const minLong = 16

// piece is one part of a card's body: trusted markup alone (open), or
// open + the escaped s + close, s cut to at most max units.
type piece struct {
	kind           pieceKind
	open, s, close string
	max            int
	// call marks a call's arguments, which give way in the middle
	// (callPiece); id is their question's. tool marks a call's tool.
	call, tool bool
	id         core.QuestionID
	// need marks the tool and the arguments of a call whose buttons the
	// card draws: the tool is written whole, and the arguments are never
	// left out nor cut below floor (floorOf). sect is that call's
	// section index plus one on each of its pieces (0 on any other
	// piece), so that a call which cannot show them is left out whole
	// (layout).
	need bool
	sect int
	// want is how many units the escaped text takes cut to max, and
	// floor the least it may be cut to (measure).
	want, floor int
}

func markupPiece(html string) piece { return piece{kind: pieceMarkup, open: html} }

func keyPiece(open, s, close string, max int) piece {
	return piece{kind: pieceKey, open: open, s: s, close: close, max: max}
}

func longPiece(open, s, close string, max int) piece {
	return piece{kind: pieceLong, open: open, s: s, close: close, max: max}
}

// callPiece is question id's call arguments, preformatted: a long piece
// whose middle gives way (card.CutMiddle), so a cut keeps how the call
// ends, which Approve approves with the rest, and says how much is not
// shown.
func callPiece(s string, max int, id core.QuestionID) piece {
	return piece{kind: pieceLong, open: "\n<pre>", s: s, close: "</pre>", max: max, call: true, id: id}
}

// esc is the piece's text escaped and cut to at most max units: a call's
// arguments cut in the middle, on each rune's escaped width, before they
// are escaped (so the escaping cuts nothing); any other text at its end.
func (p piece) esc(max int) string {
	if !p.call {
		return escIn(p.open, p.s, max)
	}
	return escIn(p.open, card.CutMiddle(p.s, max, p.id, preWidth), max)
}

// preWidth is how many units r takes escaped inside <pre> (escIn).
var preWidth = unit.EscapedWidth(func(r rune) string { return html.EscapeString(string(r)) })

// fit plans ps (measured) within room units: caps[i] is how many units
// the escaped text of piece i may take (0: leave the piece out). The
// tool of each call with buttons is kept first, whole, and its arguments
// at their floor. Other key texts get their max if all fit, else an even
// share of what the markup, those tools and floors and their own open
// and close tags leave, one unit
// (an ellipsis) at the least, or minLong where calls with buttons are
// shown (a question and tool names cut to an ellipsis would not say what
// Approve is for). Long texts share what the key texts leave, a call's
// arguments from their floor up, the others from nothing; while a share
// is too small for a text without a floor to say something (minLong),
// the last such text is left out. ok is false when not even the markup,
// the floors and those least key texts fit.
func fit(ps []piece, room int) (caps []int, ok bool) {
	caps = make([]int, len(ps))
	want, lo, extra := make([]int, len(ps)), make([]int, len(ps)), make([]int, len(ps))
	var keys, longs []int
	floors, need := 0, false
	for i, p := range ps {
		switch {
		case p.kind == pieceMarkup:
			room -= units(p.open)
		case p.s == "":
			// nothing to write
		case p.kind == pieceKey && p.need: // a tool beside its buttons: whole
			room -= units(p.open) + units(p.close) + p.want
			caps[i] = p.want
		case p.kind == pieceKey:
			room -= units(p.open) + units(p.close)
			keys = append(keys, i)
		default:
			longs = append(longs, i)
			if p.need {
				lo[i], need = p.floor, true
				floors += units(p.open) + units(p.close) + p.floor
			}
		}
		want[i], extra[i] = p.want, p.want-lo[i]
	}
	least := len(keys)
	if need {
		least = 0
		for _, i := range keys {
			least += min(want[i], minLong)
		}
	}
	if room-floors < least {
		return caps, false
	}
	room -= share(keys, want, room-floors, caps)
	for {
		left := room
		for _, i := range longs {
			left -= units(ps[i].open) + units(ps[i].close) + lo[i]
			caps[i] = 0
		}
		share(longs, extra, max(left, 0), caps)
		for _, i := range longs {
			caps[i] += lo[i]
		}
		short := func(i int) bool { return !ps[i].need && caps[i] < min(want[i], minLong) }
		if !slices.ContainsFunc(longs, short) {
			break
		}
		last := len(longs) - 1
		for ps[longs[last]].need {
			last--
		}
		caps[longs[last]] = 0
		longs = slices.Delete(longs, last, last+1)
	}
	return caps, true
}

// share divides room among the pieces idx evenly, none getting more than
// it wants: each, from the one wanting least, takes what it wants or an
// even share of what is left, whichever is less. It sets their caps and
// returns the units given.
func share(idx, want []int, room int, caps []int) int {
	order := slices.Clone(idx)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(want[a], want[b]) })
	given := 0
	for k, i := range order {
		caps[i] = min(want[i], (room-given)/(len(order)-k))
		given += caps[i]
	}
	return given
}

// measure sets each piece's want and, unless all of ps fits whole in
// room, the floor of each call's arguments whose buttons are drawn
// (floorOf, a dozen cuts of them each), once for all the plans of a card
// (layout).
func measure(ps []piece, room int) {
	for i, p := range ps {
		room -= units(p.open) + units(p.close)
		if p.kind != pieceMarkup {
			ps[i].want = units(p.esc(p.max))
			room -= ps[i].want
		}
	}
	for i, p := range ps {
		if p.need && room < 0 {
			ps[i].floor = floorOf(p)
		}
	}
}

// write writes ps into d as fit planned them (caps, ok). Should not even
// their markup have fit, they are written in order, each cut to its max,
// until one does not fit.
func (d *doc) write(ps []piece, caps []int, ok bool) {
	for i, p := range ps {
		switch {
		case p.kind == pieceMarkup:
			d.markup(p.open)
		case !ok:
			d.textWith(p.open, p.s, p.close, p.max, p.esc)
		case caps[i] > 0:
			d.markup(p.open + p.esc(caps[i]) + p.close)
		}
	}
}
