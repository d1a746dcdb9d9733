package card

import (
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// A person's display name is whatever its holder typed on Telegram,
// Slack or Discord, and every line that names them (the outcome line,
// a late clicker's note, a quorum's tally, who decided a part) is
// askbridge's own words around it. A bidi override in the name would
// reorder the words after it, a line break would start a line that reads
// as askbridge's ("Approved by Alice"), a zero-width character would
// hide. So a card names a person as the agent's resume does
// (fence.CleanName, law 7): here, once, for every line card words and
// for the lines core words from the same names (core.TallyOf,
// core.TimeoutReasonOf), which card reads through named.

// PersonName names d as every card line does: core.DeciderLabel, the
// display name cleaned as fence cleans the name an agent reads. A surface
// that draws a card's line apart from the names in it (the console
// isolates each) finds them by it.
func PersonName(d core.Decider) string { return core.DeciderLabel(cleanDecider(d)) }

// cleanDecider is d with its display name cleaned; a decider with none
// is named by its id or door (core.DeciderLabel), which people do not
// type, and askbridge's own by askbridge.
func cleanDecider(d core.Decider) core.Decider {
	if d.Name != "" && d.Surface != core.SurfaceSystem {
		d.Name = fence.CleanName(d.Name)
	}
	return d
}

// cleanStanding is u with its granter's name cleaned.
func cleanStanding(u *core.StandingUse) *core.StandingUse {
	if u == nil {
		return nil
	}
	c := *u
	c.GrantedBy = cleanDecider(c.GrantedBy)
	return &c
}

// cleanPart is a with the names it holds cleaned.
func cleanPart(a core.ItemAnswer) core.ItemAnswer {
	a.Decider, a.Standing = cleanDecider(a.Decider), cleanStanding(a.Standing)
	return a
}

// named is q with every person's name in it cleaned (cleanDecider): its
// closer's, its voters', its parts' deciders' and the granters of the
// standing approvals that decided it. q itself is left as it is; what
// holds names is copied, the rest shared.
func named(q *core.Question) *core.Question {
	c := *q
	if r := q.Resolution; r != nil {
		res := *r
		res.Decider, res.Standing = cleanDecider(res.Decider), cleanStanding(res.Standing)
		c.Resolution = &res
	}
	if q.Votes != nil {
		c.Votes = make([]core.Vote, len(q.Votes))
		for i, v := range q.Votes {
			v.Decider = cleanDecider(v.Decider)
			c.Votes[i] = v
		}
	}
	if q.Answers != nil {
		c.Answers = make([]core.ItemAnswer, len(q.Answers))
		for i, a := range q.Answers {
			c.Answers[i] = cleanPart(a)
		}
	}
	return &c
}

// TallyOf is core's tally of q's votes (core.TallyOf), its voters named
// as cards name people; nil without a quorum.
func TallyOf(q *core.Question) *core.Tally { return core.TallyOf(named(q)) }
