package card

import (
	"fmt"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// This file is the one wording, for people, of who or what closed a
// question (law 12): every card's outcome line on every chat surface, the
// console's closed card, digests and the note a late clicker gets read it
// from here. It is worded from CloserOf and, for a form or a batch, from
// each part's own decider (ItemAnswer.DecidedBy), never from
// Resolution.Decider alone: that names only whoever acted last (the last
// voter, the last part's decider), or the granter of a standing approval
// as if they had looked at the call.

// outcomeTime is how an outcome line writes a moment.
const outcomeTime = "2006-01-02 15:04 UTC"

// OutcomeLine is the one line a closed card shows: who or what closed it,
// how and when, naming people as cards do (PersonName). It is the same on
// every surface (law 2 applies to cards too); "" while q is open.
func OutcomeLine(q *core.Question) string { return outcomeLine(named(q)) }

// outcomeLine is OutcomeLine of q whose names are cleaned (named).
func outcomeLine(q *core.Question) string {
	r := q.Resolution
	if r == nil {
		return ""
	}
	at := r.At.UTC().Format(outcomeTime)
	who, via := core.DeciderLabel(r.Decider), " via "+string(r.Decider.Surface)
	switch core.CloserOf(q) {
	case core.CloserPerson:
		return "Answered by " + who + " on " + at + via
	case core.CloserQuorum:
		return quorumLine(q, at)
	case core.CloserStanding:
		return "Approved at once on " + at + " by " + standingBy(r.Standing) + "; nobody looked at this call"
	case core.CloserParts:
		return partsLine(q, at)
	case core.CloserTimeout:
		return "Timed out on " + at + progress(q) + ": " + core.TimeoutReasonOf(q) + renotified(q) + core.AwayNote(r.Away)
	case core.CloserDecline:
		return "Declined by " + who + " on " + at + via + progress(q) + ": " + declinedThen(q)
	case core.CloserAgentCancel:
		line := "Withdrawn by the agent on " + at + progress(q)
		if why := strings.TrimSpace(r.Reason); why != "" && r.Reason != core.DefaultCancelReason(r.Decider) {
			// The agent's own words, such as a hook's "answered at the
			// host" when the person answered the host's prompt first:
			// quoted as the agent's, so that words that read as an
			// outcome ("Answered by Alice ...") never pass for this
			// line's (law 7).
			line += ", saying “" + ownQuotes.Replace(why) + "”"
		}
		return line
	case core.CloserOperatorCancel:
		return "Withdrawn by an operator (" + who + ") on " + at + via + progress(q)
	case core.CloserBridgeCancel:
		return bridgeLine(r, at) + progress(q)
	case core.CloserExpiry:
		return "Expired on " + at + progress(q) + ": " + core.ExpiredReason
	case core.CloserPolicy:
		return policyLine(r, at)
	}
	return ""
}

// bridgeLine words askbridge's own withdrawal of a question, for the
// agent that asked it, with why (its reason, the server's own words:
// Cancel holds it to one line of plain text), so nobody reads it as the
// agent's doing.
func bridgeLine(r *core.Resolution, at string) string {
	why := strings.TrimSpace(r.Reason)
	if why == "" || r.Reason == core.DefaultCancelReason(r.Decider) {
		return "Withdrawn by askbridge on " + at
	}
	return "Withdrawn by askbridge (" + why + ") on " + at
}

// ownQuotes turns the double quotation marks of words quoted on an
// outcome line into single ones, so none of them ends the quote early
// and the words after it read as the line's own.
var ownQuotes = strings.NewReplacer(`"`, "'", "“", "'", "”", "'", "„", "'", "‟", "'", "＂", "'", "〝", "'", "〞", "'", "〟", "'", "❝", "'", "❞", "'")

// ClosingPerson is the one person who closed q as a whole, where one
// did: who answered or declined it, or the operator who withdrew it. A
// quorum's voters, the deciders of parts, a standing approval's granter,
// the bridge and the agent are not that person, so a surface that shows
// "by" beside an outcome shows it only for these (OutcomeLine names the
// rest). Their display name is cleaned as cards name people.
func ClosingPerson(q *core.Question) (core.Decider, bool) {
	d, ok := closingPerson(q)
	return cleanDecider(d), ok
}

// closingPerson is ClosingPerson as q records them.
func closingPerson(q *core.Question) (core.Decider, bool) {
	switch core.CloserOf(q) {
	case core.CloserPerson, core.CloserDecline, core.CloserOperatorCancel:
		return q.Resolution.Decider, true
	}
	return core.Decider{}, false
}

// PartBy names who decided one part of a form or a batch, for people: the
// person who answered it (as cards name people), or the standing approval
// that decided it at the ask (whose decider's name is the standing
// approval's label, which reads as if its granter had acted).
func PartBy(a core.ItemAnswer) string { return partBy(cleanPart(a)) }

// partBy is PartBy of a part whose names are cleaned (cleanPart).
func partBy(a core.ItemAnswer) string {
	switch a.DecidedBy() {
	case core.CloserStanding:
		return standingBy(a.Standing)
	case core.CloserPolicy:
		return a.Policy.Label()
	}
	return core.DeciderLabel(a.Decider)
}

// standingBy names a standing approval that decided something: who
// granted it and when, so nobody reads it as that person's look at the
// call.
func standingBy(u *core.StandingUse) string {
	if u == nil {
		return "a standing approval"
	}
	return "a standing approval " + core.DeciderLabel(u.GrantedBy) + " granted on " + u.GrantedAt.UTC().Format(outcomeTime)
}

// quorumLine words a close by the vote that reached what was needed,
// naming everyone whose vote went the way the question closed (the
// tally beside it shows every vote).
func quorumLine(q *core.Question, at string) string {
	choice, verdict := core.ClosingChoice(q), "Decided"
	switch {
	case q.Kind != core.KindApproval:
	case choice == core.ApproveOption:
		verdict = "Approved"
	default:
		verdict = "Denied"
	}
	var names []string
	for _, v := range q.CountedVotes() {
		if v.Choice == choice {
			names = append(names, core.DeciderLabel(v.Decider))
		}
	}
	if len(names) == 0 {
		return verdict + " on " + at + " by a vote"
	}
	n := len(names)
	count := fmt.Sprintf("%d of %d", n, q.Quorum)
	if choice == core.DenyOption {
		// One deny may be enough (a veto): counting it against the
		// quorum of approvals would be wrong.
		count = fmt.Sprintf("%d %s", n, core.Plural(n, "deny", "denies"))
	}
	return verdict + " on " + at + " by " + count + ": " + strings.Join(names, ", ")
}

// partGroup is everyone, every standing approval, or every policy rule
// that decided parts, with how many, in the order they first appear.
type partGroup struct {
	label string
	n     int
	// atAsk: a standing approval or a policy rule, which decided its
	// parts when they were asked; nobody looked at them.
	atAsk    bool
	standing bool
	surface  core.Surface
	// mixed: this one acted from more than one surface, so no one
	// "via" is true of all its parts.
	mixed bool
}

func partGroups(parts []core.ItemAnswer) []*partGroup {
	var out []*partGroup
	byKey := map[string]*partGroup{}
	for _, a := range parts {
		key := "person " + core.VoteKey(a.Decider)
		switch a.DecidedBy() {
		case core.CloserStanding:
			key = "standing "
			if a.Standing != nil {
				key += a.Standing.ID
			}
		case core.CloserPolicy:
			key = "policy " + a.Policy.Label()
		}
		g := byKey[key]
		if g == nil {
			by := a.DecidedBy()
			g = &partGroup{label: partBy(a), atAsk: by != core.CloserPerson, standing: by == core.CloserStanding, surface: a.Decider.Surface}
			byKey[key] = g
			out = append(out, g)
		} else if g.surface != a.Decider.Surface {
			g.mixed = true
		}
		g.n++
	}
	return out
}

// breakdown is "2 by Alice, 1 by a standing approval Bob granted on ...".
func breakdown(gs []*partGroup) string {
	var s []string
	for _, g := range gs {
		s = append(s, fmt.Sprintf("%d by %s", g.n, g.label))
	}
	return strings.Join(s, ", ")
}

// partNoun is what q's parts are: a batch's calls or a form's items.
func partNoun(q *core.Question) (noun, done string) {
	if p := kindCardOf(q).parts; p != nil {
		return p.noun, p.done
	}
	return "parts", "answered"
}

// partsLine words a form or a batch every part of which got its own
// answer: one person's, one standing approval's, or several of either.
func partsLine(q *core.Question, at string) string {
	gs := partGroups(q.Answers)
	if len(gs) == 0 {
		// A record without its parts can only name who closed it.
		r := q.Resolution
		return "Answered by " + core.DeciderLabel(r.Decider) + " on " + at + " via " + string(r.Decider.Surface)
	}
	if len(gs) == 1 {
		g := gs[0]
		if g.standing {
			return "Approved at once on " + at + " by " + g.label + "; nobody looked at these calls"
		}
		if g.atAsk {
			return "Decided at once on " + at + " by " + g.label + "; nobody looked at these calls"
		}
		line := "Answered by " + g.label + " on " + at
		if !g.mixed {
			line += " via " + string(g.surface)
		}
		return line
	}
	each := "Answered part by part"
	if p := kindCardOf(q).parts; p != nil {
		each = p.each
	}
	line := each + " on " + at + ": " + breakdown(gs)
	for _, g := range gs {
		if !g.atAsk {
			return line
		}
	}
	return line + "; nobody looked at these calls"
}

// progress is how far a question that closed unanswered had got: the
// parts decided before it closed and by whom, or the votes cast. It reads
// after the close: "Timed out on ... after 1 of 3 calls had been decided
// (1 by Alice)". "" when nothing had happened.
func progress(q *core.Question) string {
	switch {
	case len(q.Answers) > 0:
		noun, done := partNoun(q)
		total := len(q.Items) + len(q.Calls)
		return fmt.Sprintf(" after %d of %d %s had been %s (%s)", len(q.Answers), total, noun, done, breakdown(partGroups(q.Answers)))
	case len(q.Votes) > 0 && q.Quorum > 1 && core.CloserOf(q) != core.CloserTimeout:
		// A timeout's own reason already counts the votes (timeoutReason).
		n := len(q.Votes)
		return fmt.Sprintf(" after %d %s (%s)", n, core.Plural(n, "vote", "votes"), strings.Join(core.TallyOf(q).Lines, "; "))
	}
	return ""
}

// renotified is what the timeout policy tried before the question timed
// out: an escalation to more deciders, or asking again.
func renotified(q *core.Question) string {
	switch {
	case q.Renotified == 0:
		return ""
	case q.OnTimeout == core.OnTimeoutEscalate:
		return ", though it had been escalated to more deciders"
	case q.OnTimeout == core.OnTimeoutReask:
		return fmt.Sprintf(", though it had been asked again %d %s", q.Renotified, core.Plural(q.Renotified, "time", "times"))
	}
	return ""
}

// policyLine words a close by a route's policy rule: allowed or denied at
// the ask, by which rule, nobody having looked.
func policyLine(r *core.Resolution, at string) string {
	how := "Denied"
	if r.Approved != nil && *r.Approved {
		how = "Approved"
	}
	by := "a policy rule"
	if r.Policy != nil {
		by = r.Policy.Label()
	}
	return how + " at once on " + at + " by " + by + "; nobody looked at this call"
}

// declinedThen is what the agent does after a decline: a gated call
// nobody approved is not made (fence words its resume so), anything else
// is left to its judgement.
func declinedThen(q *core.Question) string {
	if q.Kind == core.KindApproval {
		return "the agent makes " + noUnapproved + ", and goes on by its own judgement"
	}
	return "the agent will proceed on its own judgement"
}
