package core

import "github.com/askbridge/askbridge/fence"

// Closer is who or what closed a question (law 12). Whoever builds the
// closing transition records it in the resolution, so every resume is
// worded from what happened rather than guessed from the state and a few
// optional fields. A question answered in parts (a form, a batch) records
// CloserParts, and each part says who decided it (ItemAnswer.DecidedBy).
type Closer string

const (
	// CloserPerson: one person answered the question as a whole.
	CloserPerson Closer = "person"
	// CloserQuorum: the vote that reached what was needed closed it; the
	// votes say who voted.
	CloserQuorum Closer = "quorum"
	// CloserStanding: a standing approval approved it at the ask; nobody
	// looked at it (Resolution.Standing says which).
	CloserStanding Closer = "standing"
	// CloserParts: every form item or batch call has its own answer, each
	// from a person or a standing approval (ItemAnswer.DecidedBy).
	CloserParts Closer = "parts"
	// CloserTimeout: the deadline passed, and the timeout policy had
	// nothing left to try (deny, or after escalating or re-asking).
	CloserTimeout Closer = "timeout"
	// CloserDecline: a person declined to answer.
	CloserDecline Closer = "decline"
	// CloserAgentCancel: the asking agent withdrew it.
	CloserAgentCancel Closer = "agent_cancel"
	// CloserOperatorCancel: an operator withdrew it.
	CloserOperatorCancel Closer = "operator_cancel"
	// CloserBridgeCancel: askbridge itself withdrew it, for the agent that
	// asked it, on its own account: a server-side door's wait for an
	// answer ran out, its caller went away, or the program was stopping.
	// Only askbridge's own code withdraws as System (Cancel); an agent's
	// cancel, from whichever door, is CloserAgentCancel.
	CloserBridgeCancel Closer = "bridge_cancel"
	// CloserExpiry: the run it was bound to ended.
	CloserExpiry Closer = "expiry"
	// CloserPolicy: a route's policy rule allowed or denied the call at
	// the ask; nobody looked at it (Resolution.Policy says which rule).
	CloserPolicy Closer = "policy"
)

// closers maps each closer to fence's, which words the resume from it.
var closers = map[Closer]fence.Closer{
	CloserPerson:         fence.CloserPerson,
	CloserQuorum:         fence.CloserQuorum,
	CloserStanding:       fence.CloserStanding,
	CloserParts:          fence.CloserParts,
	CloserTimeout:        fence.CloserTimeout,
	CloserDecline:        fence.CloserDecline,
	CloserAgentCancel:    fence.CloserAgentCancel,
	CloserOperatorCancel: fence.CloserOperatorCancel,
	CloserBridgeCancel:   fence.CloserBridgeCancel,
	CloserExpiry:         fence.CloserExpiry,
	CloserPolicy:         fence.CloserRule,
}

func (c Closer) String() string { return string(c) }

// ParseCloser accepts exactly the closers' names.
func ParseCloser(s string) (Closer, error) {
	if _, ok := closers[Closer(s)]; ok {
		return Closer(s), nil
	}
	return "", Errorf(CodeInvalid, "parse closer", "closer %q is not one of person, quorum, standing, parts, timeout, decline, agent_cancel, operator_cancel, bridge_cancel, expiry, policy", s)
}

// cancelCloser is who withdrew a question: the asking agent, through its
// own door; askbridge itself (System), for that agent; or else an
// operator. It is the one rule, for a cancel as it is made (Cancel) and
// for a record stored before closers were (CloserOf).
func cancelCloser(by Decider) Closer {
	switch by.Surface {
	case SurfaceAgent:
		return CloserAgentCancel
	case SurfaceSystem:
		return CloserBridgeCancel
	}
	return CloserOperatorCancel
}

// CloserOf is who or what closed q: the closer its resolution records,
// or, for a record stored before closers were recorded, the one its other
// fields show. It is the one place that reads an old record's closer;
// "" while q is open.
func CloserOf(q *Question) Closer {
	r := q.Resolution
	if r == nil {
		return ""
	}
	if r.ClosedBy != "" {
		return r.ClosedBy
	}
	switch r.State {
	case StateAnswered:
		switch {
		case r.Standing != nil:
			return CloserStanding
		case answeredInParts(q):
			return CloserParts
		case q.Quorum > 1:
			return CloserQuorum
		}
		return CloserPerson
	case StateDeclined:
		return CloserDecline
	case StateTimedOut:
		return CloserTimeout
	case StateExpired:
		return CloserExpiry
	case StateCancelled:
		return cancelCloser(r.Decider)
	}
	return ""
}

// DecidedBy is who decided one part: a standing approval or a policy rule
// when it records one, else the person who answered it.
func (a ItemAnswer) DecidedBy() Closer {
	switch {
	case a.Standing != nil:
		return CloserStanding
	case a.Policy != nil:
		return CloserPolicy
	}
	return CloserPerson
}

// Surface is where the act that decided the part came from: its
// decider's surface, except for a standing approval or a policy rule,
// which the bridge applied (its granter acted earlier, elsewhere, and a
// rule is nobody), so SurfaceSystem, as ClosingSurface says of a close.
func (a ItemAnswer) Surface() Surface {
	if a.DecidedBy() != CloserPerson {
		return SurfaceSystem
	}
	return a.Decider.Surface
}

// ClosingSurface is where the act that closed q came from: the closing
// decider's surface, except for a standing approval, which the bridge
// applied at the ask (its granter acted earlier, elsewhere), and a batch
// closed at the ask the same way (closedAtAsk), so SurfaceSystem. "" while
// q is open.
func ClosingSurface(q *Question) Surface {
	if q.Resolution == nil {
		return ""
	}
	if CloserOf(q) == CloserStanding || closedAtAsk(q) {
		return SurfaceSystem
	}
	return q.Resolution.Decider.Surface
}

// DecidedAtAsk reports whether q was closed as it was asked, by a policy
// rule or standing approvals, so that nobody was ever asked it. Such a
// question is stored open and closed a moment later, so a reader can
// catch it open in between: the console's open inbox, which leaves these
// out, drops one it drew in that moment once it reads it closed.
func DecidedAtAsk(q *Question) bool {
	c := CloserOf(q)
	return c == CloserPolicy || c == CloserStanding || closedAtAsk(q)
}

// closedAtAsk reports whether q is a batch the bridge closed when it was
// asked: every call decided by a standing approval or a policy rule, none
// by a person. Its record names the decider of its last call (a standing
// approval's granter, say) as the resolution's, and that person did
// nothing to close it.
func closedAtAsk(q *Question) bool {
	if !q.IsBatch() || CloserOf(q) != CloserParts || len(q.Answers) == 0 {
		return false
	}
	for _, a := range q.Answers {
		if a.DecidedBy() == CloserPerson {
			return false
		}
	}
	return true
}
