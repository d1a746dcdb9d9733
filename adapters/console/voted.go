package console

import (
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// votedView is the viewer's own vote on an open question that needs
// several people, as their card shows it in place of the vote buttons:
// core counts one vote per person (core.VoteKey) and refuses a second,
// so offering the buttons again would only lead to that refusal.
type votedView struct {
	// Choice words what they voted: "to approve", "to deny", or "for"
	// and the option's title.
	Choice  string
	Text    string // their own reason or note, untrusted
	Surface core.Surface
	At      time.Time
	// In is how many votes count so far, Needed how many people must
	// agree; Tally is core's count in words, its voters named as cards
	// name them (card.TallyOf).
	In, Needed int
	Tally      []string
}

// votedOf is the viewer's vote on q, or nil when they have cast none
// (or q takes no votes).
func (s *Server) votedOf(q *core.Question, a Account) *votedView {
	if q.Quorum <= 1 || !q.Open() {
		return nil
	}
	// A token is one voter on the console and on the API (core.VoteKey
	// keys both doors alike), so a vote it cast through either counts;
	// a person's vote from any of their accounts counts too.
	v, ok := s.svc.VoteOf(q, core.Decider{Surface: core.SurfaceConsole, ID: a.Name})
	if !ok {
		return nil
	}
	out := &votedView{Text: v.Text, Surface: v.Decider.Surface, At: v.At, In: len(q.CountedVotes()), Needed: q.Quorum}
	switch {
	case q.Kind == core.KindApproval && v.Choice == core.ApproveOption:
		out.Choice = "to approve"
	case q.Kind == core.KindApproval && v.Choice == core.DenyOption:
		out.Choice = "to deny"
	default:
		out.Choice = "for " + v.Choice
		if o, ok := q.Option(v.Choice); ok {
			out.Choice = "for " + o.Title
		}
	}
	if t := card.TallyOf(q); t != nil {
		out.Tally = t.Lines
	}
	return out
}
