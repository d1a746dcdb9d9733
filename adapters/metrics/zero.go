package metrics

import "github.com/askbridge/askbridge/core"

// A counter's series that first appears with a value of 1 has nothing
// for increase() and rate() to increase from, so the first event after
// every (re)start would go uncounted. The series below are therefore
// made at zero before any event: those whose labels are fixed words,
// and those of the routes the configuration names. Policy rules are
// not known here (only route names reach the metrics), so
// policy_decisions_total still starts at its first decision, and the
// time-to-answer histogram is left to its first close: a bucket series
// per kind, route and state is too many to show empty.

// askKinds are the kinds an ask can be (core.ParseKind's four).
var askKinds = []core.Kind{core.KindClarification, core.KindDecision, core.KindApproval, core.KindForm}

// askReversibilities are what an ask must say (core.ParseReversibility);
// unclassified is only read from records older than the field, never
// asked.
var askReversibilities = []core.Reversibility{core.Reversible, core.HardToReverse}

// closings are the surfaces each state is closed from, as
// core.ClosingSurface names them: a person answers or declines on any
// surface a person answers through; the bridge answers by a policy rule
// or a standing approval, times out and expires, and withdraws a
// question for its agent (a hook's wait ran out); an agent cancels its
// own question, an operator through the API or the console. Only
// these are made at zero, so the series stay few.
var closings = []struct {
	state    core.State
	surfaces []core.Surface
}{
	{core.StateAnswered, append([]core.Surface{core.SurfaceSystem}, core.AnswerSurfaces...)},
	{core.StateDeclined, core.AnswerSurfaces},
	{core.StateTimedOut, []core.Surface{core.SurfaceSystem}},
	{core.StateExpired, []core.Surface{core.SurfaceSystem}},
	{core.StateCancelled, []core.Surface{core.SurfaceAgent, core.SurfaceAPI, core.SurfaceConsole, core.SurfaceSystem}},
}

// zeroClosed makes every known closing's series at zero.
func (m *Metrics) zeroClosed() {
	for _, c := range closings {
		for _, s := range c.surfaces {
			m.closed.WithLabelValues(string(c.state), string(s))
		}
	}
}

// zeroRoutes makes the asked series of routes at zero: each kind and
// reversibility, so a configured route's first ask is counted. A route
// a reload drops keeps its series until the next start, as a counter
// must not vanish while it may still be read.
func (m *Metrics) zeroRoutes(routes []string) {
	for _, r := range routes {
		for _, k := range askKinds {
			for _, rev := range askReversibilities {
				m.asked.WithLabelValues(string(k), r, string(rev))
			}
		}
	}
}
