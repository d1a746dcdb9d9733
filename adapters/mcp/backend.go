package mcp

import (
	"context"
	"errors"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// Backend parks questions, waits for them and records what the host's user
// answers. In the server it is core.Service (through ServiceBackend); in
// `askbridge mcp` over stdio it is the HTTP client to a running server.
// Either way the resume comes from the bridge as built, never rebuilt here,
// so every transport returns the same words.
type Backend interface {
	// Ask parks a question and returns it as stored, or as its agent may
	// see it (a backend over the API): read a closed one's resume through
	// Wait, never from what Ask returned.
	Ask(ctx context.Context, in core.AskInput) (*core.Question, error)
	// Wait returns the question's status once it is closed, or after d
	// with it still open (d 0: at once). A question another agent asked
	// reads as unknown (core.ErrNotFound). If ctx ends first, ctx's error
	// may come back: it reads as "not answered yet".
	Wait(ctx context.Context, id core.QuestionID, d time.Duration) (Status, error)
	// HostMayAnswer reports whether the person driving the agent's host
	// may answer the open question there: its route lists the agent under
	// the mcp surface.
	HostMayAnswer(ctx context.Context, id core.QuestionID) (bool, error)
	// AnswerInHost records the host's answer through the chokepoint, as
	// the decider {mcp, <agent>}; the backend fills the decider. A question
	// closed first gives a *core.ClosedError saying who closed it.
	AnswerInHost(ctx context.Context, in core.AnswerInput) error
	// Withdraw cancels the agent's own open question through the
	// chokepoint, as the agent, with reason (a host cancelling its task).
	// A question closed first gives a *core.ClosedError; another agent's
	// reads as unknown (core.ErrNotFound).
	Withdraw(ctx context.Context, id core.QuestionID, reason string) error
}

// Status is where a question stands, as its asking agent may see it.
type Status struct {
	QuestionID core.QuestionID
	Kind       core.Kind
	State      core.State
	AskedAt    time.Time
	// Deadline is when it closes at the latest, as it stands.
	Deadline time.Time
	// ClosedAt is when it closed; zero while it is open.
	ClosedAt time.Time
	// Question is the question as its agent may see it (kind, text,
	// options, items, the call), for the host door's form; nil when the
	// backend could not read it.
	Question *core.Question
	// Resume is what the agent resumes with, exactly as the bridge built
	// it; nil while the question is open.
	Resume *fence.Resume
	// Calls are a closed batch's results, one per call.
	Calls []core.CallResult
}

// UnavailableError is a backend that cannot reach the bridge. Its message
// is for the model to read and act on: it names the server, the cause and
// what to do ("start it with `askbridge serve`"). A wait that meets it
// tries again before giving up; the question stays parked either way.
type UnavailableError struct {
	Message string
	Err     error
}

func (e *UnavailableError) Error() string { return e.Message }
func (e *UnavailableError) Unwrap() error { return e.Err }

// StatusOf is q's status, with the resume core builds once it is closed.
func StatusOf(q *core.Question) (Status, error) {
	st := Status{QuestionID: q.ID, Kind: q.Kind, State: q.State, AskedAt: q.CreatedAt, Deadline: q.Deadline, Question: q}
	if q.Open() {
		return st, nil
	}
	if q.Resolution != nil {
		st.ClosedAt = q.Resolution.At
	}
	r, err := core.ResumeOf(q)
	if err != nil {
		return Status{}, err
	}
	st.Resume = &r
	if q.IsBatch() {
		if st.Calls, err = core.CallResultsOf(q); err != nil {
			return Status{}, err
		}
	}
	return st, nil
}

// ServiceBackend is a Backend directly over core, for a server that runs
// the service in-process and for tests. Every question it parks is asked
// in the name of Agent or, when Agent is empty, of the HTTP caller that
// Options.Caller named (see CallerFrom).
type ServiceBackend struct {
	Svc   *core.Service
	Agent core.AgentID
}

var _ Backend = ServiceBackend{}

func (b ServiceBackend) agent(ctx context.Context) core.AgentID {
	if b.Agent != "" {
		return b.Agent
	}
	return CallerFrom(ctx)
}

var _ RepeatAsker = ServiceBackend{}

// Ask parks in as Agent's question, or the caller's.
func (b ServiceBackend) Ask(ctx context.Context, in core.AskInput) (*core.Question, error) {
	q, _, err := b.AskOrRepeat(ctx, in)
	return q, err
}

// AskOrRepeat is Ask, saying whether it was a repeat of an earlier ask
// (core.Service.AskOrRepeat), so that the door can tell a retry from an
// old tool_call_id reused (reuseWindow).
func (b ServiceBackend) AskOrRepeat(ctx context.Context, in core.AskInput) (*core.Question, bool, error) {
	in.Agent = b.agent(ctx)
	return b.Svc.AskOrRepeat(ctx, in)
}

// own returns the question if this agent asked it; any other reads as
// unknown (law 6).
func (b ServiceBackend) own(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	q, err := b.Svc.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if q.Agent != b.agent(ctx) {
		return nil, core.ErrNotFound
	}
	return q, nil
}

// Wait blocks on core until the question closes or d passes.
func (b ServiceBackend) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (Status, error) {
	q, err := b.own(ctx, id)
	if err != nil {
		return Status{}, err
	}
	if q.Open() && d > 0 {
		wctx, cancel := context.WithTimeout(ctx, d)
		q, err = b.Svc.Wait(wctx, id)
		cancel()
		if err != nil {
			return Status{}, err
		}
		if q.Open() && ctx.Err() != nil {
			return Status{}, ctx.Err()
		}
	}
	return StatusOf(q)
}

func (b ServiceBackend) host(ctx context.Context) core.Decider {
	a := string(b.agent(ctx))
	return core.Decider{Surface: core.SurfaceMCP, ID: a, Name: a}
}

// HostMayAnswer asks core's one allowlist check.
func (b ServiceBackend) HostMayAnswer(ctx context.Context, id core.QuestionID) (bool, error) {
	q, err := b.own(ctx, id)
	if err != nil {
		return false, err
	}
	return q.Open() && b.Svc.MayAnswer(q, b.host(ctx)), nil
}

// HostDeclines is a backend that keeps a host's decline of a task's
// form, on every replica, so the task stops asking that form: the Tasks
// extension has a request, once answered (a decline is an answer), never
// asked again under its key, and a host that hides keys it has seen would
// otherwise show the task waiting on it for good. The question waits for
// chat, and a form that chat's answers change is a new request (hostKey).
// `askbridge mcp`'s backend keeps it through the HTTP API, on a server
// that serves its route; a backend without it keeps asking the form.
type HostDeclines interface {
	DeclineHostForm(ctx context.Context, id core.QuestionID, key string) error
	HostFormDeclined(ctx context.Context, id core.QuestionID, key string) (bool, error)
}

var _ HostDeclines = ServiceBackend{}

// declinedKey is where the decline of form key of question id is kept.
func declinedKey(id core.QuestionID, key string) string {
	return "mcp:declined:" + string(id) + ":" + key
}

// DeclineHostForm keeps the host's decline of form key of its own
// question id until a day after the question can be open at the latest
// (core.Question.OpenFor: its deadline, moved on by the re-asks it has
// left), when it has closed anyway.
func (b ServiceBackend) DeclineHostForm(ctx context.Context, id core.QuestionID, key string) error {
	q, err := b.own(ctx, id)
	if err != nil {
		return err
	}
	ttl := q.OpenFor(b.Svc.Now()) + 24*time.Hour
	return b.Svc.Values().SetValueFor(ctx, declinedKey(id, key), "1", ttl)
}

// HostFormDeclined reports whether the host declined form key of
// question id.
func (b ServiceBackend) HostFormDeclined(ctx context.Context, id core.QuestionID, key string) (bool, error) {
	v, err := b.Svc.Values().Value(ctx, declinedKey(id, key))
	return v != "", err
}

// AnswerInHost answers as {mcp, agent} through the chokepoint.
func (b ServiceBackend) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	if _, err := b.own(ctx, in.QuestionID); err != nil {
		return err
	}
	in.Decider = b.host(ctx)
	_, err := b.Svc.Answer(ctx, in)
	return err
}

// Withdraw cancels the question as the agent, limited to its own.
func (b ServiceBackend) Withdraw(ctx context.Context, id core.QuestionID, reason string) error {
	a := b.agent(ctx)
	_, err := b.Svc.Cancel(ctx, core.CancelInput{QuestionID: id, Owner: a, Reason: reason,
		By: core.Decider{Surface: core.SurfaceAgent, ID: string(a), Name: string(a)}})
	return err
}

// closedBy is the question a refused host answer lost to, if that is why
// it was refused.
func closedBy(err error) (*core.Question, bool) {
	var c *core.ClosedError
	if errors.As(err, &c) && c.Question != nil {
		return c.Question, true
	}
	return nil, false
}
