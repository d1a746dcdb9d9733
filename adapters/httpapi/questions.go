package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
)

// askBody is an ask's body as the server reads it: client.AskRequest,
// whose timeout this field shadows, so that one sent as "0s" is told
// from one left out (the client's omitzero leaves a zero out).
type askBody struct {
	client.AskRequest
	Timeout *client.Duration `json:"timeout,omitzero"`
}

// request is the ask, its timeout checked: left out (or null), it takes
// the configured default; sent, it is at least core.MinAskTimeout. "0s" is
// refused rather than read as the default, as MCP's tools refuse a
// timeout that is not positive.
func (b askBody) request() (client.AskRequest, error) {
	req := b.AskRequest
	if b.Timeout == nil {
		return req, nil
	}
	switch d := time.Duration(*b.Timeout); {
	case d == 0:
		return req, invalid("timeout %s is no deadline: give one of at least %s, or leave timeout out for the configured default", d, core.MinAskTimeout)
	case d < core.MinAskTimeout:
		return req, invalid("timeout %s is shorter than the minimum, %s (leave timeout out for the configured default)", d, core.MinAskTimeout)
	}
	req.Timeout = *b.Timeout
	return req, nil
}

// ask parks a question on behalf of the calling token, which is the
// asking agent.
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	var body askBody
	if !s.decode(w, r, &body, true) {
		return
	}
	req, err := body.request()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// A retry after a lost response carries the same key and gets the
	// question it parked, with 200 rather than 201. A key given twice is
	// refused, as a query parameter given twice is: which one was meant
	// is not ours to guess. So is one sent empty: its sender meant its
	// retries to park once, and read as no key, each parked again.
	switch keys := r.Header.Values("Idempotency-Key"); {
	case len(keys) > 1:
		s.fail(w, r, invalid("the Idempotency-Key header is given %d times: it takes one value", len(keys)))
		return
	case len(keys) == 1 && keys[0] == "":
		s.fail(w, r, invalid("the Idempotency-Key header is empty: give it a key of up to %d characters, or leave it out", core.MaxIdempotencyKeyLen))
		return
	}
	req.IdempotencyKey = r.Header.Get("Idempotency-Key")
	q, repeat, err := s.svc.AskOrRepeat(r.Context(), req.Input(caller(r).Agent()))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/questions/"+url.PathEscape(string(q.ID)))
	status := http.StatusCreated
	if repeat {
		status = http.StatusOK
	}
	writeJSON(w, status, view(caller(r), q))
}

// visible returns the question if the caller may see it. An agent sees
// only the questions it asked; any other question reads exactly like an
// unknown id (law 6).
func (s *Server) visible(ctx context.Context, tok Token, id core.QuestionID) (*core.Question, error) {
	q, err := s.svc.Get(ctx, id)
	return seenBy(tok, q, err)
}

// seenBy is a read of a question as tok may see it: another agent's
// question is an unknown one.
func seenBy(tok Token, q *core.Question, err error) (*core.Question, error) {
	if err == nil && tok.Role != RoleAgent {
		return q, nil
	}
	return askedBy(tok.Agent(), q, err)
}

// askedBy is a read of a question that only agent's own questions pass:
// any other is an unknown one (law 6).
func askedBy(agent core.AgentID, q *core.Question, err error) (*core.Question, error) {
	if err != nil {
		return nil, err
	}
	if q.Agent != agent {
		return nil, core.ErrNotFound
	}
	return q, nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	tok := caller(r)
	q, err := s.visible(r.Context(), tok, questionID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, view(tok, q))
}

// view is q as tok may read it: an agent's token gets the allowlisted
// agent's view (law 11), every other token the whole record.
func view(tok Token, q *core.Question) any {
	if tok.Role == RoleAgent {
		return client.AgentView(q)
	}
	return client.OperatorView(q)
}

// waitSlack is how much longer than the wait itself the write deadline of
// a wait response is allowed, so a server-wide WriteTimeout shorter than
// MaxWait does not cut long polls.
const waitSlack = 30 * time.Second

// wait long-polls: it returns as soon as the store wakes the question's
// waiters with a close, or when the timeout passes with the question
// still open (200, state open, no resume). A wait that parks over HTTP/1.x
// is taken over from net/http (takeOver); its connection keeps alive after
// the answer when the API is served through Listener, and is closed
// (Connection: close) when it is not.
func (s *Server) wait(w http.ResponseWriter, r *http.Request) {
	// A wait takes no body, but some clients send one (an empty JSON
	// object, Go's empty chunked body). It is read to its end and
	// dropped: net/http notices a client leaving only once the request's
	// body has been read, and a wait parked with its body unread held its
	// watch until its timeout after the client had gone. Over the cap it
	// is the usual 413.
	if HasBody(r) {
		if _, err := readBody(w, r); !s.bodyError(w, r, err) {
			return
		}
	}
	timeout, err := s.waitTimeout(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	late := s.draining.Err() != nil // before the watch, which tests wait on
	id := questionID(r)
	// HEAD answers at once, as a wait of 0s does: a response without a
	// body has nothing to wait for, and parked it held a handler (and the
	// store's watch) for the whole timeout for headers alone.
	if timeout == 0 || r.Method == http.MethodHead {
		q, err := s.visible(r.Context(), caller(r), id)
		s.answerWait(w, r.Method, r.URL.Path, q, err)
		return
	}
	// The watch comes first and the read second, so a close in between
	// still wakes the wait; that one read also says whether the caller
	// may see the question at all.
	watch, err := s.svc.Watch(id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q, err := watch.Read(r.Context())
	if q, err = seenBy(caller(r), q, err); err != nil || !q.Open() {
		watch.Stop()
		s.answerWait(w, r.Method, r.URL.Path, q, err)
		return
	}
	// Bounded per question (waiters.go); counted once the caller is
	// known to see the question, so the bound tells a stranger nothing.
	release, ok := s.waiting.Take(id, s.maxWaiters)
	if !ok {
		watch.Stop()
		tooManyWaits(w, s.maxWaiters)
		return
	}
	holds := s.stillHolds(r)
	if s.takeOver(w, r, watch, timeout, holds, release) {
		return // the parked wait answers on the connection it took over
	}
	q, err = s.park(w, r, watch, timeout, release)
	if r.Context().Err() != nil {
		return // the caller went away; nobody to answer
	}
	q, err = heldBy(holds, q, err)
	if late {
		// It came once the server was stopping, so nothing took it over
		// (takeOver refuses then): the client's next wait goes to another
		// replica, not to this one on the same connection.
		w.Header().Set("Connection", "close")
	}
	s.answerWait(w, r.Method, r.URL.Path, q, err)
}

// heldBy is a parked wait's answer once it ends: q as it stands, unless
// the token the wait came with no longer holds (a reload removed it, or
// changed its secret or role while it waited), which gets nothing of it
// (README: a removed token stops working).
func heldBy(holds func(context.Context) bool, q *core.Question, err error) (*core.Question, error) {
	if holds != nil && !holds(context.Background()) {
		return nil, core.Errorf(core.CodeForbidden, "wait", "the token this wait came with no longer holds (a reload removed or changed it)")
	}
	return q, err
}

// park waits in the handler, as any handler would, for a question watch
// saw open, for at most timeout (or until Drain), and returns it as it
// then stands, having released its count (waiters.take). It is for the
// requests takeOver cannot take.
func (s *Server) park(w http.ResponseWriter, r *http.Request, watch *core.Watcher, timeout time.Duration, release func()) (*core.Question, error) {
	defer watch.Stop()
	defer release() // before the watch stops, which tests see
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout + waitSlack))
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	defer context.AfterFunc(s.draining, cancel)()
	return watch.Wait(ctx)
}

// answerWait writes a wait's response: the question as it stands, or
// err. method and path name the request in the log of an internal error.
func (s *Server) answerWait(w http.ResponseWriter, method, path string, q *core.Question, err error) {
	var resp client.WaitResponse
	if err == nil {
		resp, err = waitResponse(q)
	}
	if err != nil {
		s.failAt(w, method, path, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// WaitBody is the body a wait for q returns, byte for byte: what a
// question's callback URL is sent when it closes (cmd hands it to the
// webhook adapter), so a receiver parses one format either way.
func WaitBody(q *core.Question) ([]byte, error) {
	resp, err := waitResponse(q)
	if err != nil {
		return nil, err
	}
	return apierror.Encode(resp)
}

// waitTimeout reads ?timeout: a duration ([core.ParseDuration]), DefaultWait when absent,
// capped at MaxWait.
func (s *Server) waitTimeout(v url.Values) (time.Duration, error) {
	d := DefaultWait
	if raw := v.Get("timeout"); raw != "" {
		var err error
		if d, err = core.ParseDuration(raw); err != nil {
			return 0, invalid("timeout %q is %v", raw, err)
		}
	}
	return min(d, s.maxWait), nil
}

// waitResponse is the wait body for q: with the resume once it is closed,
// and the question as an agent may see it (waiting is for agents: human
// text only in the resume).
func waitResponse(q *core.Question) (client.WaitResponse, error) {
	resp := client.WaitResponse{QuestionID: q.ID, ToolCallID: q.ToolCallID, State: q.State, Question: client.AgentView(q)}
	if q.Open() {
		return resp, nil
	}
	res, err := core.ResumeOf(q)
	if err != nil {
		return client.WaitResponse{}, err
	}
	resp.Resume = &res
	if q.IsBatch() {
		results, err := core.CallResultsOf(q)
		if err != nil {
			return client.WaitResponse{}, err
		}
		for _, r := range results {
			resp.Calls = append(resp.Calls, client.CallResult{ToolCallID: r.ToolCallID, Resume: r.Resume,
				Anthropic: r.Resume.Anthropic(r.ToolCallID), OpenAI: r.Resume.OpenAI(r.ToolCallID)})
		}
		return resp, nil // the batch's own id, if any, is not a tool call's
	}
	if q.ToolCallID != "" {
		a, o := res.Anthropic(q.ToolCallID), res.OpenAI(q.ToolCallID)
		resp.Anthropic, resp.OpenAI = &a, &o
	}
	return resp, nil
}

// maxListLimit is the largest page core serves; defaultListLimit is the
// page a list that names no limit gets.
const (
	maxListLimit     = 500
	defaultListLimit = 50
)

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	if st := v.Get("state"); st != "" && st != string(core.StateOpen) {
		s.fail(w, r, invalid("state %q is not supported: only state=open can be listed (use the events or the digest for closed questions)", st))
		return
	}
	limit := defaultListLimit
	if raw := v.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxListLimit {
			s.fail(w, r, invalid("limit %q must be a whole number from 1 to %d", raw, maxListLimit))
			return
		}
		limit = n
	}
	qs, next, err := s.svc.ListOpen(r.Context(), v.Get("cursor"), limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.ListResponse{Questions: client.OperatorViews(qs), NextCursor: next})
}

// decider is how an API token decides: its name is both id and name;
// its role lets routes say "role:operator" on the API, as on the console.
func decider(tok Token) core.Decider {
	return core.Decider{Surface: core.SurfaceAPI, ID: tok.Name, Name: tok.Name, Roles: tok.Role.Held()}
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	var req client.AnswerRequest
	if !s.decode(w, r, &req, true) {
		return
	}
	o, err := s.svc.Answer(r.Context(), core.AnswerInput{
		QuestionID: questionID(r),
		Decider:    decider(caller(r)),
		Text:       req.Answer,
		OptionID:   req.ChosenOptionID,
		Items:      req.Items,
		Arguments:  req.Arguments,
		Standing:   req.Standing,
		Calls:      req.Calls,
	})
	s.outcome(w, r, o, err)
}

// decline takes no body: the agent resumes with a fixed server-owned text,
// so anything sent along would be silently dropped, and is refused.
func (s *Server) decline(w http.ResponseWriter, r *http.Request) {
	if !s.noBody(w, r, "decline takes no request body: a declined question resumes the agent with a fixed text") {
		return
	}
	o, err := s.svc.Decline(r.Context(), questionID(r), decider(caller(r)))
	s.outcome(w, r, o, err)
}

// cancel withdraws a question: an agent its own (others read as unknown),
// an operator or admin any.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	var req client.CancelRequest
	if !s.decode(w, r, &req, false) {
		return
	}
	tok := caller(r)
	by := core.Decider{Surface: core.SurfaceAgent, ID: tok.Name, Name: tok.Name}
	if tok.Role != RoleAgent {
		by.Surface = core.SurfaceAPI // an operator withdrawing someone's question
	}
	o, err := s.svc.Cancel(r.Context(), core.CancelInput{QuestionID: questionID(r), By: by, Owner: owner(tok), Reason: req.Reason})
	s.outcome(w, r, o, err)
}

// questionID is the question the request's path names, as sent: core
// answers a malformed id exactly like an unknown one.
func questionID(r *http.Request) core.QuestionID { return core.QuestionID(r.PathValue("id")) }

// owner limits an agent to its own questions; "" lets the rest act on any.
func owner(tok Token) core.AgentID {
	if tok.Role == RoleAgent {
		return tok.Agent()
	}
	return ""
}

// outcome writes what was recorded, or the error; a loser hears who
// closed the question, when and how (409). An agent's token gets the
// agent's view of the question.
func (s *Server) outcome(w http.ResponseWriter, r *http.Request, o core.Outcome, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if caller(r).Role == RoleAgent {
		writeJSON(w, http.StatusOK, client.AgentOutcome{Question: client.AgentView(o.Question), Closed: o.Closed})
		return
	}
	out := client.Outcome{Question: client.OperatorView(o.Question), Closed: o.Closed}
	if o.Standing != nil {
		st := client.ShownStanding(*o.Standing)
		out.Standing = &st
	}
	writeJSON(w, http.StatusOK, out)
}

// endRun expires the open questions of a run: an agent's own, or, for an
// admin, everyone's.
func (s *Server) endRun(w http.ResponseWriter, r *http.Request) {
	if !s.decode(w, r, &struct{}{}, false) {
		return
	}
	run := core.RunID(r.PathValue("run_id"))
	// An agent ends its own runs; an admin names the agent (?agent=),
	// or ends its own. An agent naming another is refused rather than
	// ignored: ignored, its own run of that name ended instead.
	tok := caller(r)
	agent := tok.Agent()
	// A name given empty never gets here (paramProblem): read as none,
	// the caller's own run of that name ended, whoever it meant.
	if a := core.AgentID(r.URL.Query().Get("agent")); a != "" && a != agent {
		if tok.Role != RoleAdmin {
			s.fail(w, r, core.Errorf(core.CodeForbidden, "end run",
				"a token with role %s may not end another agent's run (agent=%q): only an admin's may", tok.Role, a))
			return
		}
		agent = a
	}
	outs, err := s.svc.EndRun(r.Context(), core.Run{Agent: agent, ID: run})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ids := make([]core.QuestionID, 0, len(outs))
	for _, o := range outs {
		ids = append(ids, o.Question.ID)
	}
	writeJSON(w, http.StatusOK, client.EndRunResponse{RunID: run, Expired: ids})
}
