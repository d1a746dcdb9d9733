package mcp

import (
	"context"
	"time"

	"github.com/askbridge/askbridge/core"
)

// reuseWindow is how long after a question closed an ask that repeats its
// tool call (same agent, run and tool_call_id) still gets its outcome, in
// the run a door files unnamed calls under. A repeat is a host sending a
// call again after its reply was lost, which happens within minutes; that
// run never ends, though, and a model makes its ids up ("deploy-1"), so
// the same id days later is a new call, and replaying the old verdict
// would decide it with nobody asked.
const reuseWindow = 10 * time.Minute

// RepeatAsker is a Backend that tells a repeated ask from a new one, as
// core.Service.AskOrRepeat does: repeat is true when nothing new was
// parked and q is the question an earlier ask of the same call parked. A
// backend without it is taken at its word that every ask is new, so the
// door never refuses a reused tool_call_id through it. The door asks
// through AskOrRepeat when a backend has it: a wrapper of ServiceBackend
// that changes Ask must change AskOrRepeat alike.
type RepeatAsker interface {
	AskOrRepeat(ctx context.Context, in core.AskInput) (q *core.Question, repeat bool, err error)
}

// ask parks in through the backend, reporting a repeat if the backend can.
// An ask that gets the bridge's answer, a refusal included, tells the
// handler that the bridge's address is right (handler.heard).
func (h *handler) ask(ctx context.Context, in core.AskInput) (q *core.Question, repeat bool, err error) {
	if r, ok := h.b.(RepeatAsker); ok {
		q, repeat, err = r.AskOrRepeat(ctx, in)
	} else {
		q, err = h.b.Ask(ctx, in)
	}
	h.heard(err)
	return q, repeat, err
}

// staleRepeat reports when the question a repeated ask got back closed, if
// that was longer ago than reuseWindow: the call is then a new one
// reusing an old tool_call_id, not a retry.
func (h *handler) staleRepeat(ctx context.Context, q *core.Question) (time.Time, bool) {
	if q.Open() {
		return time.Time{}, false // the same wait, however late: replay it
	}
	at := time.Time{}
	if q.Resolution != nil {
		at = q.Resolution.At
	} else if st, err := h.b.Wait(ctx, q.ID, 0); err == nil {
		at = st.ClosedAt
	}
	if at.IsZero() {
		return time.Time{}, false
	}
	return at, h.opts.Clock.Now().Sub(at) > reuseWindow
}

// reusedCallID is the tool error for a call that reuses the tool_call_id
// of a question that closed long ago. It says neither the old outcome
// nor the old question's id: this call has no outcome yet, and a model
// shown an old approval would be tempted to act on it.
func reusedCallID(callID string, closed time.Time) error {
	return invalid("tool_call_id %q already decided an earlier question, which closed at %s, so nothing was asked now: "+
		"a tool_call_id names one call, and reusing it returns that call's outcome only to a retry soon after. "+
		"Call again with a new tool_call_id, unique to this call.", callID, closed.UTC().Format(time.RFC3339))
}
