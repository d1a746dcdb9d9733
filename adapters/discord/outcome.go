package discord

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A closed card's outcome (outcomeSegs), and the closed batch's calls
// that give way to it whole (part, withCalls): cardContentWith puts them
// together. An open batch's decided calls give way to its calls with
// buttons the same way (withDecided, openContent).

// minShown is the least room the agent's texts are cut to before a closed
// batch's calls give way: enough for a line of a call's arguments.
const minShown = 80

// part is a run of a card's segs; drop marks a batch's call that may be
// left out whole (cardParts), and sect is its section's index plus one
// (0 for a part that is no section).
type part struct {
	segs []seg
	drop bool
	sect int
}

// dropping is how many of parts may be left out whole.
func dropping(parts []part) int {
	n := 0
	for _, p := range parts {
		if p.drop {
			n++
		}
	}
	return n
}

// withCalls joins parts, a closed batch's, keeping the first keep of the
// droppable ones and saying in their place how many more there were.
func withCalls(parts []part, keep, droppable int) []seg {
	var segs []seg
	seen := 0
	for _, p := range parts {
		if p.drop {
			seen++
			if seen > keep {
				if seen == keep+1 {
					n := droppable - keep
					segs = append(segs, fixed(fmt.Sprintf("\n\n*…and %d more %s, too long to show here*", n, core.Plural(n, "call", "calls"))))
				}
				continue
			}
		}
		segs = append(segs, p.segs...)
	}
	return segs
}

// keeping is how much of a closed card's outcome is kept whole while the
// rest of the card gives way.
type keeping int

const (
	keepLines keeping = iota // the outcome line, and each decided call's line
	keepRuns                 // the outcome line, and the verdict and decider of each run of calls decided alike
	keepNone                 // nothing: the outcome is cut with the rest
)

// outcomeSegs are the lines a closed card shows instead of its buttons:
// who or what closed it, how and when, then what was chosen. A batch
// lists each decided call with its verdict and who decided it, in one
// line (its own section then leaves them out), or with keepRuns each run
// of consecutive calls with the same verdict and decider in one line,
// whose tools' names may be cut. What k keeps is kept whole (each at its
// own cap) while the rest of the card gives way.
func outcomeSegs(c card.Card, k keeping) []seg {
	o := c.Outcome
	keep := func(s string, max int) seg {
		if k == keepNone {
			return text(s, max)
		}
		return fixed(escape(strings.TrimSpace(s), max))
	}
	mark := map[core.State]string{
		core.StateAnswered: "✅", core.StateDeclined: "↩️", core.StateTimedOut: "⌛",
		core.StateExpired: "⌛", core.StateCancelled: "✖️",
	}[o.State]
	segs := []seg{fixed("\n\n" + mark + " "), keep(o.Line, 400)}
	if calls := decidedCalls(c); len(calls) > 0 {
		label := o.Label
		if label == "" { // closed before every call was decided
			label = "Decided"
		}
		segs = append(segs, fixed("\n**"+label+":** "))
		for i, r := range verdictRuns(calls, k == keepRuns) {
			if i > 0 {
				segs = append(segs, fixed("\n"))
			}
			tools := strings.Join(r.tools, ", ")
			toolSeg := keep(tools, 80)
			if k == keepRuns {
				toolSeg = text(tools, 80)
			}
			segs = append(segs, fixed(r.nums()+". "), toolSeg, fixed(": "),
				keep(r.verdict, 200), fixed(" (by "), keep(r.by, 120), fixed(")"))
		}
	} else if o.Label != "" {
		segs = append(segs, fixed("\n**"+o.Label+":** "), text(o.Choice, 1200))
	}
	if o.Label != "" && o.Reason != "" {
		segs = append(segs, fixed("\n**Reason:** "), text(o.Reason, 600))
	}
	return segs
}

// withDecided joins parts, an open batch card's, keeping the first keep
// of its decided calls (drop) whole and, where the first of the others
// stood, one line for each run of them decided alike (verdictRuns): the
// decisions made so far show on every card, however crowded.
func withDecided(c card.Card, parts []part, keep int) []seg {
	var segs []seg
	var left []card.Section
	seen, at := 0, -1
	for _, p := range parts {
		if p.drop {
			if seen++; seen > keep {
				if at < 0 {
					at = len(segs)
				}
				left = append(left, c.Sections[p.sect-1])
				continue
			}
		}
		segs = append(segs, p.segs...)
	}
	if at < 0 {
		return segs
	}
	runs := []seg{fixed("\n\n**Decided:** ")}
	for i, r := range verdictRuns(left, true) {
		if i > 0 {
			runs = append(runs, fixed("\n"))
		}
		runs = append(runs, fixed(r.nums()+". "), text(strings.Join(r.tools, ", "), 80), fixed(": "),
			text(r.verdict, 200), fixed(" (by "), text(r.by, 120), fixed(")"))
	}
	return slices.Insert(segs, at, runs...)
}

// verdictRun is one line of a closed batch's verdicts: calls from to to
// (numbered from 1), decided alike, and their tools, each named once.
type verdictRun struct {
	from, to    int
	tools       []string
	verdict, by string
}

func (r verdictRun) nums() string {
	if r.from == r.to {
		return strconv.Itoa(r.from)
	}
	return fmt.Sprintf("%d–%d", r.from, r.to)
}

// verdictRuns are the verdict lines of a batch's decided calls: one a
// call or, merged, one for each run of consecutive calls with the same
// verdict and decider.
func verdictRuns(calls []card.Section, merged bool) []verdictRun {
	var out []verdictRun
	for _, s := range calls {
		n, tool, verdict, by := s.Index+1, oneLine(s.Title), oneLine(s.Answer.Text), oneLine(s.Answer.By)
		if last := len(out) - 1; merged && last >= 0 && out[last].to == n-1 && out[last].verdict == verdict && out[last].by == by {
			out[last].to = n
			if !slices.Contains(out[last].tools, tool) {
				out[last].tools = append(out[last].tools, tool)
			}
			continue
		}
		out = append(out, verdictRun{from: n, to: n, tools: []string{tool}, verdict: verdict, by: by})
	}
	return out
}

// decidedCalls are a batch card's decided calls; none for other kinds.
func decidedCalls(c card.Card) []card.Section {
	if c.Progress == nil {
		return nil
	}
	var out []card.Section
	for _, s := range c.Sections {
		if s.Kind == card.SectionCall && s.Answer != nil {
			out = append(out, s)
		}
	}
	return out
}
