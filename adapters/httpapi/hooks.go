package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
)

// Headers of a hook's response, for the "askbridge hook" command and for
// people reading a log; the hosts read only the body.
const (
	// HeaderQuestionID names the question the prompt was asked as. It is
	// sent before the wait, so a command killed mid-wait can withdraw it.
	HeaderQuestionID = "Askbridge-Question-Id"
)

// Why a hook's question is withdrawn.
const (
	// ReasonAnsweredAtHost: the host stopped waiting on the hook (it killed
	// the command or closed the request), which it does when the person at
	// the keyboard answered its own prompt first.
	ReasonAnsweredAtHost = "answered at the host"
	// reasonHookGaveUp: the hook's wait ran out, so the host is about to
	// fall back to its own prompt.
	reasonHookGaveUp = "no answer in time: left to the host's own prompt"
)

// hook answers a host's hook (POST /v1/hooks/{host}): the body is the
// host's hook input, asked as an approval by the calling agent; the
// response is the host's decision JSON once the question closes, or an
// empty body (no decision: the host asks at the keyboard) for a decline, a
// timeout, an expiry or a cancel. ?route= names the route; ?wait= bounds
// the wait (a Go duration, the server's max wait at most and by default):
// set it a little under the hook's own timeout. A question still open
// when the wait ends, or when the caller goes away, is withdrawn, so
// nothing is left parked that nobody waits for.
func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	host, err := hooks.ParseHost(r.PathValue("host"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	wait := s.maxWait
	if raw := r.URL.Query().Get("wait"); raw != "" {
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 {
			s.fail(w, r, invalid("wait %q is not a positive Go duration such as \"550s\"", raw))
			return
		}
		wait = min(d, s.maxWait)
	}
	body, err := readBody(w, r)
	if err == nil {
		// The same strict reading as every body (duplicate keys, bad
		// UTF-8), so the arguments bound by digest are the ones sent.
		var v any
		err = decodeJSON(body, &v, true)
	}
	if !s.bodyError(w, r, err) {
		return
	}
	p, err := hooks.Parse(host, body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tok := caller(r)
	in, err := p.Ask(tok.Name, r.URL.Query().Get("route"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The ask is not cut short by the caller going away: a question
	// stored as the caller left must still be seen, and withdrawn, below.
	q, _, err := s.svc.AskOrRepeat(context.WithoutCancel(r.Context()), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set(HeaderQuestionID, q.ID)
	w.Header().Set("Content-Type", "application/json")
	if q.Open() {
		// The status and the question's id go out now; the body (the
		// decision, or nothing) once the question closes.
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(wait + waitSlack))
		w.WriteHeader(http.StatusOK)
		_ = rc.Flush()
		var gone bool
		if q, gone = s.hookWait(r, tok, q, wait); gone {
			return // the caller went away; the question is withdrawn
		}
	}
	covered := func() bool { return s.svc.EveryCallCovered(in) }
	out, err := hooks.Output(p, hooks.Decide(p, q, covered))
	if err != nil {
		s.log.Error().Err(err).Str("path", r.URL.Path).Msg("hook output")
		out = nil // no decision: the host's own prompt
	}
	_, _ = w.Write(out)
}

// hookWait waits for q to close, for at most wait, and returns it as it
// then stands, withdrawn if still open (nil if it cannot be read). gone
// reports that the caller went away, its question withdrawn too.
func (s *Server) hookWait(r *http.Request, tok Token, q *core.Question, wait time.Duration) (_ *core.Question, gone bool) {
	watch, err := s.svc.Watch(q.ID)
	if err == nil {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		stopDrain := context.AfterFunc(s.draining, cancel)
		var got *core.Question
		if got, err = watch.Read(ctx); err == nil && got.Open() {
			got, err = watch.Wait(ctx)
		}
		stopDrain()
		cancel()
		watch.Stop()
		if err == nil && got != nil && !got.Open() {
			return got, false
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Error().Err(err).Str("question", q.ID).Msg("hook wait")
	}
	if r.Context().Err() != nil {
		s.withdraw(tok, q.ID, ReasonAnsweredAtHost)
		return nil, true
	}
	return s.withdraw(tok, q.ID, reasonHookGaveUp), false
}

// withdraw cancels a hook's question for the agent that asked it, and
// returns it as it then stands: closed by the cancel, or by whoever closed
// it first.
func (s *Server) withdraw(tok Token, id, reason string) *core.Question {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	by := core.Decider{Surface: core.SurfaceAgent, ID: tok.Name, Name: tok.Name}
	o, err := s.svc.Cancel(ctx, core.CancelInput{QuestionID: id, By: by, Owner: owner(tok), Reason: reason})
	if err == nil {
		return o.Question
	}
	q, gerr := s.svc.Get(ctx, id)
	if gerr != nil {
		s.log.Error().Err(err).Str("question", id).Msg("hook withdraw")
		return nil
	}
	return q
}
