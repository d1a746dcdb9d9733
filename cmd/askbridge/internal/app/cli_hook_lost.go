package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// lostAnswer is how the door's answer to a hook was lost: why is the
// failure as said when nobody decided the question, late how the answer
// failed to arrive ("within 5m15s", or the read's error).
type lostAnswer struct {
	why  error
	late string
}

// settle ends the hook whose answer from the door was lost (its bound
// ran out, or the connection broke while the answer was due): it
// withdraws question id and, when someone or something closed it first,
// reads how. A deny already recorded is handed over (hooks.Recovered):
// lost, it would end as a server out of reach does, which for Codex's
// PreToolUse is nothing on stdout, leaving a call a person refused to
// Codex's own approval policy. Anything else ends as a server out of
// reach does (failed, hooks.FailedAsk), with a reason that says what the
// command knows: nobody decided (its withdrawal closed the question, or
// it closed undecided), an approval did not arrive (the command does not
// hand one over that the door did not), or what became of the question
// could not be read: an unknown outcome, which gets what a server out of
// reach gets.
func settle(target target, p hooks.Prompt, id core.QuestionID, lost lostAnswer, stdout, stderr io.Writer, failed func(error) int) int {
	unreached := func(err error) int { return failed(&hooks.Unreached{Server: target.base, Err: err}) }
	if id == "" {
		return unreached(lost.why)
	}
	q, err := closedFirst(target, id)
	switch {
	case err != nil:
		return unreached(fmt.Errorf("no answer arrived %s, and what became of question %s could not be read: %w", lost.late, id, err))
	case q == nil:
		return unreached(lost.why) // the withdrawal closed it: nobody had decided
	}
	if d := hooks.Recovered(p, q); d.Verdict == hooks.Deny {
		out, err := hooks.Output(p, d)
		if err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stderr, "askbridge: the answer to question %s did not arrive %s; it was denied, as the question's record says\n", id, lost.late)
		if _, err := stdout.Write(out); err != nil {
			return fail(stderr, err)
		}
		return 0
	}
	if r := q.Resolution; q.State == core.StateAnswered && r != nil && r.Approved != nil && *r.Approved {
		return unreached(fmt.Errorf("the approval of question %s did not arrive %s", id, lost.late))
	}
	return unreached(lost.why)
}

// hookSettle bounds settle's withdrawal and read together: the hook's
// wait, its slack and this stay under the hook timeout README suggests.
const hookSettle = 5 * time.Second

// closedFirst withdraws the hook's question id, as one the hook got no
// decision for, and returns nil when that closed it (it was open); when
// it was closed already, it returns the question as the agent's token
// reads it. An error means neither is known.
func closedFirst(target target, id core.QuestionID) (*core.Question, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hookSettle)
	defer cancel()
	c := target.client()
	_, err := c.Cancel(ctx, id, hooks.ReasonNoDecision)
	if err == nil {
		return nil, nil
	}
	if !closedAlready(err) {
		return nil, fmt.Errorf("withdrawing it: %w", err)
	}
	v, err := c.Get(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading it: %w", err)
	}
	return &core.Question{ID: v.ID, Agent: v.Agent, RunID: v.RunID, State: v.State, Resolution: v.Resolution}, nil
}

// closedAlready reports whether err is the API's refusal to withdraw a
// question that is closed already (409).
func closedAlready(err error) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict
}
