package card_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// The people and grants the outcome table closes questions with.
var (
	outAlice = core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Alice", Person: "alice"}
	// outAliceTG is Alice's other account: her parts count as hers.
	outAliceTG = core.Decider{Surface: core.SurfaceTelegram, ID: "11", Name: "alice_tg", Person: "alice"}
	outBob     = core.Decider{Surface: core.SurfaceTelegram, ID: "22", Name: "Bob", Person: "bob"}
	outOps     = core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops"}
	outAgent   = core.Decider{Surface: core.SurfaceAgent, ID: "bot", Name: "bot"}
	outClosed  = cardT0.Add(7 * time.Minute)
	// Two standing approvals, granted before the ask by Alice and Bob.
	outGrantA = core.StandingUse{ID: "st-a", GrantedBy: outAlice, GrantedAt: cardT0.Add(-30 * time.Minute)}
	outGrantB = core.StandingUse{ID: "st-b", GrantedBy: outBob, GrantedAt: cardT0.Add(-90 * time.Minute)}
)

// outBatch is a batch of three calls to write_file.
func outBatch() *core.Question {
	q := cardQ(core.KindApproval)
	q.Call = nil
	for i := range 3 {
		q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%d", i+1), ToolCall: core.ToolCall{
			Tool: "write_file", Arguments: json.RawMessage(`{}`), ArgumentsSHA256: strings.Repeat("cd", 32)}})
	}
	return q
}

// outPart is the answer to part id (a form item, a batch call).
func outPart(id, option string, d core.Decider) core.ItemAnswer {
	return core.ItemAnswer{ItemID: id, OptionID: option, Decider: d, At: cardT0.Add(3 * time.Minute)}
}

// byStanding is call id approved by grant at the ask, recorded as
// decideAtAsk records it: the decider is the granter, named with the
// grant's label.
func byStanding(id string, grant core.StandingUse) core.ItemAnswer {
	d := grant.GrantedBy
	d.Name = core.StandingLabel(core.Standing{GrantedBy: grant.GrantedBy, GrantedAt: grant.GrantedAt})
	g := grant
	return core.ItemAnswer{ItemID: id, OptionID: core.ApproveOption, Decider: d, At: cardT0, Standing: &g}
}

// TestOutcomeLineByKindAndCloser pins the outcome line every surface shows
// (chat cards, the console, digests, a late clicker's note) for every
// kind against every closer that applies to it: it names who or what
// really closed the question (law 12), not Resolution.Decider, which is
// only whoever acted last. Each record is also read as stored before
// closers were recorded (ClosedBy empty): CloserOf derives the same
// closer, so the line must not change.
func TestOutcomeLineByKindAndCloser(t *testing.T) {
	yes, no := true, false
	const at = "2026-06-01 09:07 UTC"
	type setup func(q *core.Question) // q is open; it fills in the closed record
	closeAs := func(st core.State, by core.Closer, d core.Decider, more func(q *core.Question, r *core.Resolution)) setup {
		return func(q *core.Question) {
			q.State = st
			q.Resolution = &core.Resolution{State: st, ClosedBy: by, Decider: core.Decider{Surface: d.Surface, ID: d.ID, Name: d.Name, Person: d.Person}, At: outClosed}
			if more != nil {
				more(q, q.Resolution)
			}
		}
	}
	answered := func(by core.Closer, d core.Decider, more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateAnswered, by, d, more)
	}
	timedOut := func(more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateTimedOut, core.CloserTimeout, core.System, more)
	}
	declined := func(more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateDeclined, core.CloserDecline, outBob, more)
	}
	agentCancel := func(more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateCancelled, core.CloserAgentCancel, outAgent, more)
	}
	opCancel := func(more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateCancelled, core.CloserOperatorCancel, outOps, more)
	}
	expired := func(more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateExpired, core.CloserExpiry, core.System, more)
	}
	// bridgeCancel is askbridge's own withdrawal (a hook door's wait ran
	// out), for the agent that asked.
	bridgeCancel := func(more func(q *core.Question, r *core.Resolution)) setup {
		return closeAs(core.StateCancelled, core.CloserBridgeCancel, core.System, func(q *core.Question, r *core.Resolution) {
			r.Reason = "no answer in time: left to the host's own prompt"
			if more != nil {
				more(q, r)
			}
		})
	}
	const bridgeWhy = "Withdrawn by askbridge (no answer in time: left to the host's own prompt) on "
	votes := func(q *core.Question, n int, vs ...core.Vote) {
		q.Quorum = n
		for i := range vs {
			vs[i].Key, vs[i].At = "person:"+vs[i].Decider.Person, cardT0.Add(time.Duration(i+1)*time.Minute)
		}
		q.Votes = vs
	}
	// parts answers a form's or a batch's parts.
	parts := func(as ...core.ItemAnswer) func(q *core.Question, r *core.Resolution) {
		return func(q *core.Question, r *core.Resolution) { q.Answers = as }
	}
	// lastOf is parts, with the resolution's decider the last part's, as
	// stores record it.
	lastOf := func(as ...core.ItemAnswer) func(q *core.Question, r *core.Resolution) {
		return func(q *core.Question, r *core.Resolution) {
			q.Answers, r.Decider = as, as[len(as)-1].Decider
		}
	}
	edit := &core.ArgumentEdit{Arguments: json.RawMessage(`{"q":"select"}`), ArgumentsSHA256: strings.Repeat("ef", 32),
		AskedArgumentsSHA256: strings.Repeat("ab", 32), Changes: []core.KeyChange{{Key: "q", Change: core.KeyChanged}}}

	grantA := "a standing approval Alice granted on 2026-06-01 08:30 UTC"
	grantB := "a standing approval Bob granted on 2026-06-01 07:30 UTC"
	for _, c := range []struct {
		name string
		kind core.Kind
		set  setup
		want string
	}{
		// A clarification: one person, or nobody.
		{"clarification/person", core.KindClarification, answered(core.CloserPerson, outAlice, func(q *core.Question, r *core.Resolution) { r.Answer = "eu-west-1" }),
			"Answered by Alice on " + at + " via slack"},
		{"clarification/timeout", core.KindClarification, timedOut(nil), "Timed out on " + at + ": nobody answered before the deadline"},
		{"clarification/timeout escalated", core.KindClarification, timedOut(func(q *core.Question, r *core.Resolution) {
			q.OnTimeout, q.Renotified = core.OnTimeoutEscalate, 1
		}), "Timed out on " + at + ": nobody answered before the deadline, though it had been escalated to more deciders"},
		{"clarification/timeout reasked", core.KindClarification, timedOut(func(q *core.Question, r *core.Resolution) {
			q.OnTimeout, q.Renotified = core.OnTimeoutReask, 2
		}), "Timed out on " + at + ": nobody answered before the deadline, though it had been asked again 2 times"},
		{"clarification/decline", core.KindClarification, declined(nil), "Declined by Bob on " + at + " via telegram: the agent will proceed on its own judgement"},
		{"clarification/agent cancel", core.KindClarification, agentCancel(nil), "Withdrawn by the agent on " + at},
		{"clarification/agent cancel with a reason", core.KindClarification, agentCancel(func(q *core.Question, r *core.Resolution) {
			r.Reason = "the host stopped waiting (answered at the keyboard, or its hook timed out)"
		}), "Withdrawn by the agent on " + at + ", saying “the host stopped waiting (answered at the keyboard, or its hook timed out)”"},
		{"clarification/agent cancel with the default reason", core.KindClarification, agentCancel(func(q *core.Question, r *core.Resolution) {
			r.Reason = "withdrawn by " + string(r.Decider.Surface) + " " + r.Decider.ID
		}), "Withdrawn by the agent on " + at},
		{"clarification/operator cancel", core.KindClarification, opCancel(nil), "Withdrawn by an operator (ops) on " + at + " via api"},
		{"clarification/askbridge's withdrawal", core.KindClarification, bridgeCancel(nil), bridgeWhy + at},
		{"clarification/askbridge's withdrawal with no reason", core.KindClarification, bridgeCancel(func(q *core.Question, r *core.Resolution) {
			r.Reason = core.DefaultCancelReason(core.System)
		}), "Withdrawn by askbridge on " + at},
		{"clarification/expiry", core.KindClarification, expired(nil), "Expired on " + at + ": the run this question belonged to has ended"},

		// A decision: a person, or a quorum whose voters are all named.
		{"decision/person", core.KindDecision, answered(core.CloserPerson, outAlice, func(q *core.Question, r *core.Resolution) { r.OptionID = "b" }),
			"Answered by Alice on " + at + " via slack"},
		{"decision/quorum", core.KindDecision, answered(core.CloserQuorum, outBob, func(q *core.Question, r *core.Resolution) {
			r.OptionID = "b"
			votes(q, 2, core.Vote{Choice: "b", Decider: outAlice}, core.Vote{Choice: "a", Decider: outOps}, core.Vote{Choice: "b", Decider: outBob})
		}), "Decided on " + at + " by 2 of 2: Alice, Bob"},
		{"decision/timeout with votes", core.KindDecision, timedOut(func(q *core.Question, r *core.Resolution) {
			votes(q, 2, core.Vote{Choice: "b", Decider: outAlice})
		}), "Timed out on " + at + ": the quorum was not reached before the deadline (1 of 2 for B: Alice)"},
		{"decision/decline after a vote", core.KindDecision, declined(func(q *core.Question, r *core.Resolution) {
			votes(q, 2, core.Vote{Choice: "b", Decider: outAlice})
		}), "Declined by Bob on " + at + " via telegram after 1 vote (1 of 2 for B: Alice): the agent will proceed on its own judgement"},
		{"decision/agent cancel", core.KindDecision, agentCancel(nil), "Withdrawn by the agent on " + at},
		{"decision/operator cancel", core.KindDecision, opCancel(nil), "Withdrawn by an operator (ops) on " + at + " via api"},
		{"decision/askbridge's withdrawal after a vote", core.KindDecision, bridgeCancel(func(q *core.Question, r *core.Resolution) {
			votes(q, 2, core.Vote{Choice: "b", Decider: outAlice})
		}), bridgeWhy + at + " after 1 vote (1 of 2 for B: Alice)"},
		{"decision/expiry", core.KindDecision, expired(nil), "Expired on " + at + ": the run this question belonged to has ended"},

		// An approval: a person, a quorum, or a standing approval nobody
		// looked at.
		{"approval/person", core.KindApproval, answered(core.CloserPerson, outAlice, func(q *core.Question, r *core.Resolution) { r.Approved = &yes }),
			"Answered by Alice on " + at + " via slack"},
		{"approval/person denies", core.KindApproval, answered(core.CloserPerson, outAlice, func(q *core.Question, r *core.Resolution) { r.Approved = &no }),
			"Answered by Alice on " + at + " via slack"},
		{"approval/quorum", core.KindApproval, answered(core.CloserQuorum, outBob, func(q *core.Question, r *core.Resolution) {
			r.Approved = &yes
			votes(q, 2, core.Vote{Choice: core.ApproveOption, Decider: outAlice}, core.Vote{Choice: core.ApproveOption, Decider: outBob})
		}), "Approved on " + at + " by 2 of 2: Alice, Bob"},
		{"approval/quorum denied", core.KindApproval, answered(core.CloserQuorum, outBob, func(q *core.Question, r *core.Resolution) {
			r.Approved = &no
			votes(q, 2, core.Vote{Choice: core.ApproveOption, Decider: outAlice}, core.Vote{Choice: core.DenyOption, Decider: outBob})
		}), "Denied on " + at + " by 1 deny: Bob"},
		{"approval/standing", core.KindApproval, answered(core.CloserStanding, core.Decider{Surface: core.SurfaceSlack, ID: "U1", Person: "alice",
			Name: core.StandingLabel(core.Standing{GrantedBy: outAlice, GrantedAt: outGrantA.GrantedAt})}, func(q *core.Question, r *core.Resolution) {
			g := outGrantA
			r.Approved, r.Standing = &yes, &g
		}), "Approved at once on " + at + " by " + grantA + "; nobody looked at this call"},
		{"approval/timeout", core.KindApproval, timedOut(nil), "Timed out on " + at + ": nobody answered before the deadline"},
		{"approval/timeout with a vote", core.KindApproval, timedOut(func(q *core.Question, r *core.Resolution) {
			votes(q, 2, core.Vote{Choice: core.ApproveOption, Decider: outAlice})
		}), "Timed out on " + at + ": the quorum was not reached before the deadline (1 of 2 approvals: Alice)"},
		{"approval/decline", core.KindApproval, declined(nil), "Declined by Bob on " + at + " via telegram: the agent makes no call that was not approved, and goes on by its own judgement"},
		{"approval/agent cancel after a vote", core.KindApproval, agentCancel(func(q *core.Question, r *core.Resolution) {
			votes(q, 2, core.Vote{Choice: core.ApproveOption, Decider: outAlice})
		}), "Withdrawn by the agent on " + at + " after 1 vote (1 of 2 approvals: Alice)"},
		{"approval/operator cancel", core.KindApproval, opCancel(nil), "Withdrawn by an operator (ops) on " + at + " via api"},
		{"approval/askbridge's withdrawal", core.KindApproval, bridgeCancel(nil), bridgeWhy + at},
		{"approval/expiry", core.KindApproval, expired(nil), "Expired on " + at + ": the run this question belonged to has ended"},

		// An approval with changes: the person who edited it.
		{"approval edit/person", core.KindApproval, answered(core.CloserPerson, outBob, func(q *core.Question, r *core.Resolution) {
			r.Approved, r.Edit = &yes, edit
		}), "Answered by Bob on " + at + " via telegram"},

		// A form: its items' answerers, each named, not the last one.
		{"form/one person", core.KindForm, answered(core.CloserParts, outAlice, lastOf(outPart("i1", "fri", outAlice), outPart("i2", "s", outAlice))),
			"Answered by Alice on " + at + " via slack"},
		{"form/one person, two accounts", core.KindForm, answered(core.CloserParts, outAliceTG, lastOf(outPart("i1", "fri", outAlice), outPart("i2", "s", outAliceTG))),
			"Answered by Alice on " + at},
		{"form/several people", core.KindForm, answered(core.CloserParts, outBob, lastOf(outPart("i1", "fri", outAlice), outPart("i2", "s", outBob))),
			"Answered item by item on " + at + ": 1 by Alice, 1 by Bob"},
		{"form/no parts recorded", core.KindForm, answered(core.CloserParts, outBob, nil), "Answered by Bob on " + at + " via telegram"},
		{"form/timeout", core.KindForm, timedOut(nil), "Timed out on " + at + ": nobody answered before the deadline"},
		{"form/timeout after a part", core.KindForm, timedOut(parts(outPart("i1", "fri", outAlice))),
			"Timed out on " + at + " after 1 of 2 items had been answered (1 by Alice): nobody answered the rest before the deadline"},
		{"form/decline after a part", core.KindForm, declined(parts(outPart("i1", "fri", outAlice))),
			"Declined by Bob on " + at + " via telegram after 1 of 2 items had been answered (1 by Alice): the agent will proceed on its own judgement"},
		{"form/agent cancel", core.KindForm, agentCancel(nil), "Withdrawn by the agent on " + at},
		{"form/askbridge's withdrawal after a part", core.KindForm, bridgeCancel(parts(outPart("i1", "fri", outAlice))),
			bridgeWhy + at + " after 1 of 2 items had been answered (1 by Alice)"},
		{"form/operator cancel after a part", core.KindForm, opCancel(parts(outPart("i1", "fri", outAlice))),
			"Withdrawn by an operator (ops) on " + at + " via api after 1 of 2 items had been answered (1 by Alice)"},
		{"form/expiry after a part", core.KindForm, expired(parts(outPart("i1", "fri", outAlice))),
			"Expired on " + at + " after 1 of 2 items had been answered (1 by Alice): the run this question belonged to has ended"},

		// A batch: its calls' deciders, people and standing approvals,
		// each named for what it was.
		{"batch/one person", core.KindApproval, answered(core.CloserParts, outAlice, lastOf(
			outPart("toolu_1", core.ApproveOption, outAlice), outPart("toolu_2", core.DenyOption, outAlice), outPart("toolu_3", core.ApproveOption, outAlice))),
			"Answered by Alice on " + at + " via slack"},
		{"batch/several people", core.KindApproval, answered(core.CloserParts, outBob, lastOf(
			outPart("toolu_1", core.ApproveOption, outAlice), outPart("toolu_2", core.DenyOption, outAlice), outPart("toolu_3", core.ApproveOption, outBob))),
			"Decided call by call on " + at + ": 2 by Alice, 1 by Bob"},
		{"batch/standing", core.KindApproval, answered(core.CloserParts, outAlice, lastOf(
			byStanding("toolu_1", outGrantA), byStanding("toolu_2", outGrantA), byStanding("toolu_3", outGrantA))),
			"Approved at once on " + at + " by " + grantA + "; nobody looked at these calls"},
		{"batch/two standing approvals", core.KindApproval, answered(core.CloserParts, outBob, lastOf(
			byStanding("toolu_1", outGrantA), byStanding("toolu_2", outGrantB), byStanding("toolu_3", outGrantA))),
			"Decided call by call on " + at + ": 2 by " + grantA + ", 1 by " + grantB + "; nobody looked at these calls"},
		{"batch/person and standing", core.KindApproval, answered(core.CloserParts, outAlice, lastOf(
			byStanding("toolu_1", outGrantB), outPart("toolu_2", core.DenyOption, outAlice), outPart("toolu_3", core.ApproveOption, outAlice))),
			"Decided call by call on " + at + ": 1 by " + grantB + ", 2 by Alice"},
		{"batch/standing and the same person", core.KindApproval, answered(core.CloserParts, outAlice, lastOf(
			byStanding("toolu_1", outGrantA), outPart("toolu_2", core.DenyOption, outAlice), outPart("toolu_3", core.ApproveOption, outAlice))),
			"Decided call by call on " + at + ": 1 by " + grantA + ", 2 by Alice"},
		{"batch/timeout", core.KindApproval, timedOut(nil), "Timed out on " + at + ": nobody answered before the deadline"},
		{"batch/timeout after some calls", core.KindApproval, timedOut(parts(byStanding("toolu_1", outGrantA), outPart("toolu_2", core.DenyOption, outBob))),
			"Timed out on " + at + " after 2 of 3 calls had been decided (1 by " + grantA + ", 1 by Bob): nobody decided the rest before the deadline"},
		{"batch/decline after a call", core.KindApproval, declined(parts(outPart("toolu_2", core.DenyOption, outAlice))),
			"Declined by Bob on " + at + " via telegram after 1 of 3 calls had been decided (1 by Alice): the agent makes no call that was not approved, and goes on by its own judgement"},
		{"batch/agent cancel after a call", core.KindApproval, agentCancel(parts(outPart("toolu_2", core.DenyOption, outAlice))),
			"Withdrawn by the agent on " + at + " after 1 of 3 calls had been decided (1 by Alice)"},
		{"batch/operator cancel", core.KindApproval, opCancel(nil), "Withdrawn by an operator (ops) on " + at + " via api"},
		{"batch/askbridge's withdrawal after a call", core.KindApproval, bridgeCancel(parts(outPart("toolu_2", core.DenyOption, outAlice))),
			bridgeWhy + at + " after 1 of 3 calls had been decided (1 by Alice)"},
		{"batch/expiry after a call", core.KindApproval, expired(parts(byStanding("toolu_1", outGrantA))),
			"Expired on " + at + " after 1 of 3 calls had been decided (1 by " + grantA + "): the run this question belonged to has ended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := cardQ(c.kind)
			if strings.HasPrefix(c.name, "batch/") {
				q = outBatch()
			}
			c.set(q)
			check := func(q *core.Question) {
				t.Helper()
				if got := card.OutcomeLine(q); got != c.want {
					t.Fatalf("outcome line\n got %q\nwant %q", got, c.want)
				}
				view := card.New(q, core.MessageRef{Kind: core.DeliverPost})
				if view.Outcome == nil || view.Outcome.Line != c.want || view.Outcome.Closer != core.CloserOf(q) {
					t.Fatalf("the card's outcome %+v is not the outcome line (closer %s)", view.Outcome, core.CloserOf(q))
				}
				note := card.RefusalNote(&core.ClosedError{Question: q})
				if want := "Already closed. " + c.want + ". Your answer was not recorded."; note != want {
					t.Fatalf("a late clicker's note\n got %q\nwant %q", note, want)
				}
			}
			check(q)
			old := *q
			r := *q.Resolution
			r.ClosedBy, old.Resolution = "", &r
			if core.CloserOf(&old) != core.CloserOf(q) {
				t.Fatalf("the record read as stored before closers reads as %s, not %s", core.CloserOf(&old), core.CloserOf(q))
			}
			check(&old)
		})
	}
}

// TestOutcomeLineOfAPolicyRule pins the outcome line of what a route's
// policy rule decided at the ask (rules came after closers were
// recorded, so TestOutcomeLineByKindAndCloser's reading of an older
// record does not apply): the rule is named, and nobody is said to have
// looked, on a lone call and on a batch's calls beside other deciders.
func TestOutcomeLineOfAPolicyRule(t *testing.T) {
	yes, no := true, false
	const at = "2026-06-01 09:07 UTC"
	use := core.RuleUse{Route: "prod", Index: 1, Name: "no-fetch"}
	rule := `policy rule 1 of route "prod" ("no-fetch")`
	byRule := func(id string) core.ItemAnswer {
		u := use
		return core.ItemAnswer{ItemID: id, OptionID: core.DenyOption, Decider: core.System, At: cardT0, Policy: &u}
	}
	closed := func(q *core.Question, st core.State, by core.Closer, d core.Decider) *core.Question {
		q.State, q.Resolution = st, &core.Resolution{State: st, ClosedBy: by, Decider: d, At: outClosed}
		return q
	}
	lone := func(approved *bool) *core.Question {
		q := closed(cardQ(core.KindApproval), core.StateAnswered, core.CloserPolicy, core.System)
		u := use
		q.Resolution.Approved, q.Resolution.Policy = approved, &u
		return q
	}
	batch := func(st core.State, by core.Closer, d core.Decider, parts ...core.ItemAnswer) *core.Question {
		q := outBatch()
		q.Answers = parts
		return closed(q, st, by, d)
	}
	for _, c := range []struct {
		name string
		q    *core.Question
		want string
	}{
		{"allowed", lone(&yes), "Approved at once on " + at + " by " + rule + "; nobody looked at this call"},
		{"denied", lone(&no), "Denied at once on " + at + " by " + rule + "; nobody looked at this call"},
		{"a batch the rule decided", batch(core.StateAnswered, core.CloserParts, core.System, byRule("toolu_1"), byRule("toolu_2"), byRule("toolu_3")),
			"Decided at once on " + at + " by " + rule + "; nobody looked at these calls"},
		{"a batch the rule and a person decided", batch(core.StateAnswered, core.CloserParts, outAlice, byRule("toolu_1"),
			outPart("toolu_2", core.ApproveOption, outAlice), outPart("toolu_3", core.ApproveOption, outAlice)),
			"Decided call by call on " + at + ": 1 by " + rule + ", 2 by Alice"},
		{"a batch timed out after the rule's call", batch(core.StateTimedOut, core.CloserTimeout, core.System, byRule("toolu_1")),
			"Timed out on " + at + " after 1 of 3 calls had been decided (1 by " + rule + "): nobody decided the rest before the deadline"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := card.New(c.q, core.MessageRef{Kind: core.DeliverPost}).Outcome
			if o == nil || o.Line != c.want || o.By != "" || o.Surface != "" {
				t.Fatalf("outcome %+v\nwant the line %q, naming no person", o, c.want)
			}
		})
	}
}

// TestCardNamesWhoDecidedEachPart: a part a standing approval decided is
// named as that standing approval on the card, not as its granter, and
// the card's outcome names a person only where one closed it as a whole.
func TestCardNamesWhoDecidedEachPart(t *testing.T) {
	q := outBatch()
	q.Answers = []core.ItemAnswer{byStanding("toolu_1", outGrantA), outPart("toolu_2", core.DenyOption, outBob)}
	c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
	var by []string
	var via []core.Surface
	for _, s := range c.Sections {
		if s.Answer != nil {
			by, via = append(by, s.Answer.By), append(via, s.Answer.Surface)
		}
	}
	if want := []string{"a standing approval Alice granted on 2026-06-01 08:30 UTC", "Bob"}; fmt.Sprint(by) != fmt.Sprint(want) {
		t.Fatalf("the decided calls are by %q, want %q", by, want)
	}
	// The bridge applied the standing approval at the ask: its granter
	// acted earlier, elsewhere (core.ItemAnswer.Surface).
	if want := []core.Surface{core.SurfaceSystem, core.SurfaceTelegram}; fmt.Sprint(via) != fmt.Sprint(want) {
		t.Fatalf("the decided calls came via %q, want %q", via, want)
	}
	q.Answers = append(q.Answers, outPart("toolu_3", core.ApproveOption, outBob))
	q.State = core.StateAnswered
	q.Resolution = &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserParts, Decider: outBob, At: outClosed}
	if o := card.New(q, core.MessageRef{Kind: core.DeliverPost}).Outcome; o.By != "" || o.Surface != "" {
		t.Fatalf("a batch decided call by call names %q via %q as if they had closed it", o.By, o.Surface)
	}
}

// TestARefusalNoteOfAFailoverSaysItMayHaveCounted: a click whose store
// failed over while recording it may have been recorded (the card may
// show it answered), so its note says so rather than that nothing was.
func TestARefusalNoteOfAFailoverSaysItMayHaveCounted(t *testing.T) {
	err := fmt.Errorf("recorded on the primary, but WAIT saw 0 of 1 replicas: %w", core.ErrUnavailable)
	if got := card.RefusalNote(err); got != card.UnavailableNote {
		t.Errorf("note %q, want %q", got, card.UnavailableNote)
	}
	if got := card.RefusalNote(core.Internal("answer", errors.New("disk full"))); !strings.Contains(got, "could not record") {
		t.Errorf("an internal error's note %q no longer says it was not recorded", got)
	}
}

// TestARefusalNoteOfATimeOutSaysItMayHaveCounted: a click whose reply
// window ran out while its answer was being written (Discord's three
// seconds, a Telegram callback query's budget) may yet be recorded, so
// its note says so rather than that nothing was. One that ran out before
// anything was written (a read) is told to try again: before, any
// deadline was told it may have counted.
func TestARefusalNoteOfATimeOutSaysItMayHaveCounted(t *testing.T) {
	cut := core.Internal("redis commit", fmt.Errorf("script resolve: %w", context.DeadlineExceeded))
	if got := card.RefusalNote(fmt.Errorf("%w (%w)", cut, core.ErrOutcomeUnknown)); got != card.TimedOutNote {
		t.Errorf("a write cut by its deadline: note %q, want %q", got, card.TimedOutNote)
	}
	read := core.Internal("get", fmt.Errorf("hgetall: %w", context.DeadlineExceeded))
	if got := card.RefusalNote(read); got == card.TimedOutNote || !strings.Contains(got, "could not record") {
		t.Errorf("a read cut by its deadline: note %q, want the try-again note", got)
	}
}
