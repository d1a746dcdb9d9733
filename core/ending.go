package core

import (
	"context"
	"errors"
	"strings"
	"time"
)

// The closes that answer nothing: a person's decline, a withdrawal by
// the agent or an operator, and the end of an agent's run.

// Decline closes the question without an answer; the agent resumes with a
// fixed server-owned text telling it to proceed on its own judgement (for
// an approval: without the call, which was not approved).
func (s *Service) Decline(ctx context.Context, id QuestionID, d Decider) (Outcome, error) {
	return s.DeclineShown(ctx, id, d, "")
}

// DeclineShown is Decline from a caller whose own response shows the
// card it was declined on (shown, its message id on d's surface; see
// AnswerInput.Shown).
//
// A question a policy rule decided (its close by the rule still to come:
// a repeat of the ask records it) is no person's to decline, as it is no
// person's to approve or deny: the agent would be told to go on by its
// own judgement with a call the rule decided. Nor is one that needs
// several people (Question.Declinable).
func (s *Service) DeclineShown(ctx context.Context, id QuestionID, d Decider, shown string) (Outcome, error) {
	d = s.identify(d).Decider
	admitted := d // as the chokepoint's check let them in (attempt.admitted)
	return s.resolve(ctx, attempt{op: "decline", id: id, door: doorHuman, actor: d, shown: shown, admitted: &admitted,
		build: func(q *Question, now time.Time) (Transition, error) {
			if q.Rule.decides() {
				return Transition{}, conflictOf(errDecidedFirst, "decline", "%s %s this call: no person decides it", q.Rule.Label(), q.Rule.verb())
			}
			if q.Open() && !q.Declinable() {
				return Transition{}, Errorf(CodeConflict, "decline", "this question needs %d people to agree: one person's decline cannot close it; vote, or leave it to the others", q.Quorum)
			}
			return s.systemClose(StateDeclined, CloserDecline, admitted, DeclineReason)(q, now)
		}})
}

// CancelInput withdraws a question. It is a struct, not four arguments,
// because three of them are strings a caller could swap unnoticed.
type CancelInput struct {
	QuestionID QuestionID
	// By is who withdraws it: the asking agent, an operator, or askbridge
	// itself (System), recorded as such (cancelCloser). Only askbridge's
	// own server-side doors withdraw as System, for the agent that asked
	// (Owner), on their own account (their wait ran out, the program is
	// stopping); no API, MCP or CLI request makes a System decider, so an
	// agent's own cancel always records the agent.
	By Decider
	// Owner, when set, is the agent that must have asked the question;
	// any other agent's question reads as unknown (law 6). "" lets an
	// operator withdraw any question; askbridge withdraws only with it.
	Owner AgentID
	// Reason is recorded with the close; blank records who withdrew it.
	Reason string
}

// Cancel withdraws a question.
func (s *Service) Cancel(ctx context.Context, in CancelInput) (Outcome, error) {
	reason := in.Reason
	if in.By.Surface == SurfaceSystem {
		if in.Owner == "" {
			return Outcome{}, Errorf(CodeInvalid, "cancel", "askbridge withdraws a question only for the agent that asked it: name that agent as the owner")
		}
		in.By = System // recorded as askbridge, whatever else the door filled in
	}
	if err := checkCancelReason(in.By, reason); err != nil {
		return Outcome{}, err
	}
	if strings.TrimSpace(reason) == "" {
		reason = DefaultCancelReason(in.By)
	}
	return s.resolve(ctx, attempt{op: "cancel", id: in.QuestionID, door: doorAgent, owner: in.Owner, actor: in.By,
		build: s.systemClose(StateCancelled, cancelCloser(in.By), in.By, reason)})
}

// checkCancelReason: an agent's reason, and askbridge's own, show on
// every card's outcome line, where a control, a bidi override or a line
// break could forge what follows ("Answered by alice"), so they are
// checked as ask text is, as one line; an operator's, for its length
// alone.
func checkCancelReason(by Decider, reason string) error {
	if cancelCloser(by) == CloserOperatorCancel {
		return checkLen("cancel", "reason", reason, MaxReasonLen)
	}
	err := checkText("cancel", "reason", reason, MaxReasonLen, false)
	if err == nil && strings.ContainsAny(reason, "\n\u2028\u2029") {
		err = Errorf(CodeInvalid, "cancel", "reason holds a line break: it is shown as one line, so it must be one")
	}
	return err
}

// Run names one agent's run. Runs are each agent's own, so a run id never
// travels without its agent, and the two cannot be swapped.
type Run struct {
	Agent AgentID
	ID    RunID
}

// Key is how stores name the run: its agent and id, so one agent can
// never end, or block asks into, another agent's run of the same name.
func (r Run) Key() string { return string(r.Agent) + "\x1f" + string(r.ID) }

// runOfKey is the Run whose Key is key. Neither part of a valid run may
// hold the separator (checkID refuses control characters), so the split
// is unambiguous.
func runOfKey(key string) (Run, bool) {
	agent, id, ok := strings.Cut(key, "\x1f")
	return Run{Agent: AgentID(agent), ID: RunID(id)}, ok && agent != "" && id != ""
}

// EndRun marks an agent's run ended and expires its open questions, each
// through the chokepoint with its own expired event. A later answer to any
// of them is refused, and so is a later ask into the run. Runs are each
// agent's own: another agent's run of the same name is untouched.
//
// The run is journalled ([Endings]) before the store marks it ended and
// dropped only once all of that is done, so an ending cut short in
// between (the process killed, the store failing) is finished by the
// ticker (finishEndings), and answers meanwhile are refused
// (refuseIfEnding), rather than its questions staying open and
// answerable until their deadlines. Ending a run again finishes it too.
func (s *Service) EndRun(ctx context.Context, run Run) ([]Outcome, error) {
	const op = "end run"
	if err := checkID(op, "run_id", run.ID, true); err != nil {
		return nil, err
	}
	if err := checkID(op, "agent", run.Agent, true); err != nil {
		return nil, err
	}
	now := s.now()
	if err := s.store.BeginEnding(ctx, run.Key(), now); err != nil {
		return nil, Internal(op, err)
	}
	s.endings.begin(run.Key())
	out, err := s.endRun(ctx, run, now)
	if err != nil {
		return out, err // still journalled: a tick finishes it
	}
	// Done. A drop that fails leaves the run to a tick, which ends it
	// again, finds nothing left to expire and drops it then.
	dctx, cancel := Settle(ctx)
	defer cancel()
	if s.store.EndingDone(dctx, run.Key()) == nil {
		s.endings.done(run.Key())
	}
	return out, nil
}

// endRun marks the run ended at now and expires its open questions, and
// ends its standing approvals.
func (s *Service) endRun(ctx context.Context, run Run, now time.Time) (out []Outcome, err error) {
	const op = "end run"
	ids, err := s.store.EndRun(ctx, run.Key(), now)
	if err != nil {
		return nil, Internal(op, err)
	}
	// Once the run is marked ended the rest must follow even if the caller
	// goes (an agent's client timing out, exiting): cut short, the run's
	// questions would stay open until a tick finished the ending, minutes
	// later.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endRunWithin)
	defer cancel()
	if err := s.endRunStandings(ctx, run); err != nil {
		return nil, err
	}
	// Standing approvals granted by answers that closed the run's
	// questions while they were being expired are ended too.
	defer func() {
		if serr := s.endRunStandings(ctx, run); serr != nil && err == nil {
			err = serr
		}
	}()
	for _, id := range ids {
		o, err := s.expire(ctx, run, id)
		switch {
		case err == nil:
			out = append(out, o)
		case errors.Is(err, ErrClosed), ErrorCode(err) == CodeNotFound:
			// closed or purged meanwhile
		default:
			return out, err
		}
	}
	return out, nil
}

// expire closes question id of run as expired by the run's end, through
// the chokepoint.
func (s *Service) expire(ctx context.Context, run Run, id QuestionID) (Outcome, error) {
	return s.resolve(ctx, attempt{op: "end run", id: id, door: doorAgent, owner: run.Agent, actor: System,
		build: s.systemClose(StateExpired, CloserExpiry, System, ExpiredReason)})
}

// endRunWithin bounds how long EndRun goes on expiring a run's questions
// after its caller has gone.
const endRunWithin = time.Minute

// DefaultCancelReason is what a cancel that gives no reason records: who
// withdrew the question. Cards leave it out, since they say who already.
func DefaultCancelReason(by Decider) string {
	return "withdrawn by " + string(by.Surface) + " " + by.ID
}
