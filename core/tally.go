package core

import (
	"fmt"
	"slices"
	"strings"
)

// How a question's votes count is read in one place, voteCount, against
// the configuration in force, as the chokepoint reads it when it counts a
// vote: a vote counts only while its voter may still decide (voterAllowed).
// Cards, resumes and the operator's view read the same count from the
// question itself (CountedVotes, TallyOf), so that what they show is what
// the next vote would find, from the reload on and not only from the next
// vote:
//
//   - an open question carries it as the Service hands it out
//     (Question.Counted: Get, the lists, the chokepoint's outcome);
//   - a close records it (Resolution.Counted), so the card and resume of
//     a closed question count as its close did, whatever a later reload
//     says;
//   - a question read without either (a store's own read, a record from
//     before it was kept) counts as its latest vote found
//     (Vote.Discounted).
//
// A card already posted shows the count it was rendered with: the sweep
// after a reload (refresh.go) edits those whose count the reload changed.
//
// A reload may leave fewer people able to decide a question than its
// quorum. The question is not closed for it: no closer tells that truth
// (it was neither denied by people nor timed out), a reload that puts
// people back or its escalation may still let it reach its quorum, and a
// reload mid-edit must not decide every question waiting on a group. Its
// tally says so instead (unreachable), on every card, view and vote
// response from then on, and so does the reason of its timeout, which
// the agent reads; deny: count still closes it denied at the next vote
// once the denies in suffice (voteTransition).

// VoteCount is how a question's votes count against the routes in force.
type VoteCount struct {
	// Uncounted are the keys (Vote.Key) of the votes that do not count:
	// their voters may no longer decide it (a reload took them off).
	Uncounted []string `json:"uncounted,omitempty"`
	// Voters is how many people may decide it, where that is known: its
	// routes let in people alone (or nobody at all) and it cannot
	// escalate to more; nil when not known. Fewer than its quorum means
	// the quorum cannot be reached.
	Voters *int `json:"voters,omitempty"`
}

// voteCount reads how q's votes count now: the one reading of who may
// still vote, for the chokepoint's count (voteTransition) and for what
// the tally shows (counted).
func (s *Service) voteCount(q *Question) *VoteCount {
	c := &VoteCount{}
	for _, v := range q.Votes {
		if !s.voterAllowed(q, v) {
			c.Uncounted = append(c.Uncounted, v.Key)
		}
	}
	if n, ok := s.peopleDeciding(q, true); ok && !s.mayEscalate(q) {
		c.Voters = &n
	}
	return c
}

// counted is q with its vote count read now (Question.Counted) when it
// is open and takes votes; q itself otherwise. q is left as it is.
func (s *Service) counted(q *Question) *Question {
	if q == nil || !q.Open() || q.Quorum <= 1 {
		return q
	}
	c := *q
	c.Counted = s.voteCount(q)
	return &c
}

// mayEscalate reports whether q may still escalate to a route whose
// people would then vote too: its next deadline escalates (AtDeadline).
func (s *Service) mayEscalate(q *Question) bool {
	_, ok := s.EscalationOf(q)
	return AtDeadline(q, ok) == OnTimeoutEscalate
}

// voteCount is how q's votes count as q carries it: as its close counted
// them, or, open, as the Service read them; nil if it carries neither.
func (q *Question) voteCount() *VoteCount {
	if q.Resolution != nil {
		return q.Resolution.Counted
	}
	return q.Counted
}

// CountedVotes are q's votes that count: all but those cast by someone
// no longer allowed to decide, as q carries its count (voteCount), else
// as the latest vote found (Vote.Discounted; votes cast in the same
// millisecond as the latest are read together).
func (q *Question) CountedVotes() []Vote {
	if len(q.Votes) == 0 {
		return nil
	}
	var off []string
	if c := q.voteCount(); c != nil {
		off = c.Uncounted
	} else {
		last := q.Votes[len(q.Votes)-1].At
		for _, v := range q.Votes {
			if v.At.Equal(last) {
				off = append(off, v.Discounted...)
			}
		}
	}
	if len(off) == 0 {
		return q.Votes
	}
	return slices.DeleteFunc(slices.Clone(q.Votes), func(v Vote) bool { return slices.Contains(off, v.Key) })
}

// unreachable words that too few people may decide q for its quorum to
// be reached, as q carries its count; "" if not so, or not known.
// closing words it for q's close, which q does not show yet.
func (q *Question) unreachable(closing bool) string {
	c := q.voteCount()
	if c == nil || c.Voters == nil || *c.Voters >= q.Quorum {
		return ""
	}
	n, who := *c.Voters, "nobody"
	if n > 0 {
		who = fmt.Sprintf("only %d %s", n, Plural(n, "person", "people"))
	}
	if q.Open() && !closing {
		return fmt.Sprintf("%s may decide it now: a quorum of %d cannot be reached", who, q.Quorum)
	}
	return fmt.Sprintf("%s could decide it: a quorum of %d could not be reached", who, q.Quorum)
}

// Tally is a question's votes as cards show them.
type Tally struct {
	Needed int
	// Lines are the counts in words, the first the one that closes it:
	// "1 of 2 approvals: Alice", "1 deny: Bob".
	Lines []string
}

// TallyOf counts q's votes for its cards; nil without a quorum.
func TallyOf(q *Question) *Tally { return tallyOf(q, false) }

// tallyOf is TallyOf, worded for q's close (closing) while q is still
// open: the close's reason.
func tallyOf(q *Question, closing bool) *Tally {
	if q.Quorum <= 1 {
		return nil
	}
	t := &Tally{Needed: q.Quorum}
	names := map[string][]string{}
	counted := q.CountedVotes()
	for _, v := range counted {
		names[v.Choice] = append(names[v.Choice], DeciderLabel(v.Decider))
	}
	line := func(n int, what string, who []string) string {
		s := fmt.Sprintf("%d of %d %s", n, q.Quorum, what)
		if len(who) > 0 {
			s += ": " + strings.Join(who, ", ")
		}
		return s
	}
	switch q.Kind {
	case KindApproval:
		t.Lines = append(t.Lines, line(len(names[ApproveOption]), "approvals", names[ApproveOption]))
		if n := len(names[DenyOption]); n > 0 {
			t.Lines = append(t.Lines, fmt.Sprintf("%d %s: %s", n, Plural(n, "deny", "denies"), strings.Join(names[DenyOption], ", ")))
		}
	case KindDecision:
		for _, o := range q.Options {
			if who := names[o.ID]; len(who) > 0 || len(q.Votes) == 0 && o.Recommended {
				t.Lines = append(t.Lines, line(len(who), "for "+o.Title, who))
			}
		}
		if len(t.Lines) == 0 {
			t.Lines = append(t.Lines, fmt.Sprintf("0 of %d votes", q.Quorum))
		}
	}
	if n := len(q.Votes) - len(counted); n > 0 {
		var who []string
		for _, v := range q.Votes {
			if !slices.ContainsFunc(counted, func(c Vote) bool { return c.Key == v.Key }) {
				who = append(who, DeciderLabel(v.Decider))
			}
		}
		t.Lines = append(t.Lines, fmt.Sprintf("%d no longer %s, its voter off the route: %s", n, Plural(n, "counts", "count"), strings.Join(who, ", ")))
	}
	if s := q.unreachable(closing); s != "" {
		t.Lines = append(t.Lines, s)
	}
	return t
}

// Plural is one or many, as n calls for: the tally here and the outcome
// lines a card shows (core/card) count alike.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// QuorumTimeoutReason is the account of a timeout of a question with a
// quorum: some may have voted, so it does not say nobody answered.
const QuorumTimeoutReason = "the quorum was not reached before the deadline"

// TimeoutReasonOf is the honest account of a timeout of q as it stood
// when it timed out: the votes a question with a quorum had by then, and
// for a form or a batch some of whose parts were answered, that nobody
// answered (decided, for calls) the rest.
func TimeoutReasonOf(q *Question) string {
	switch {
	case len(q.Answers) > 0 && q.Shape() == ShapeBatch:
		return "nobody decided the rest before the deadline"
	case len(q.Answers) > 0:
		return "nobody answered the rest before the deadline"
	case q.Quorum <= 1:
		return TimeoutReason
	}
	return QuorumTimeoutReason + " (" + strings.Join(tallyOf(q, true).Lines, "; ") + ")"
}
