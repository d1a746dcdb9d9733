package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/internal/waitcount"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

// maxWaitFailures is how many waits in a row may fail with an internal
// error (the backend briefly unreachable, a server restarting) before a
// call gives up. The question is durable, so giving up leaves it parked.
const maxWaitFailures = 5

// traced is ctx continuing the caller's trace: the traceparent (and
// tracestate) keys of the request's _meta, where the MCP specification
// puts W3C trace context (SEP-414), or else the headers of the HTTP
// request that carried the call.
func traced(ctx context.Context, req *mcpsdk.CallToolRequest) context.Context {
	if req.Params != nil {
		if tp, _ := req.Params.Meta["traceparent"].(string); tp != "" {
			ts, _ := req.Params.Meta["tracestate"].(string)
			return core.WithTraceParent(ctx, tp, ts)
		}
	}
	if req.Extra != nil && req.Extra.Header != nil {
		return core.WithTraceParent(ctx, req.Extra.Header.Get("traceparent"), req.Extra.Header.Get("tracestate"))
	}
	return ctx
}

// handler serves every tool: park the question, then wait for it.
type handler struct {
	b       Backend
	opts    Options
	run     core.RunID       // the run id of last resort, made once per server
	waiting waitcount.Counts // the calls waiting on each question (waiters.go)
	// listening is the task listen streams following each question
	// (listen.go), bounded as waiting is and counted apart from it.
	listening waitcount.Counts
	// reached is set once the bridge has answered an ask or a read of
	// this server's, a refusal included, so its address is right
	// (heard, misaddressed).
	reached atomic.Bool
}

// served is ctx for one tool call: ended by Options.Stop too, and over
// HTTP by the end of the POST that carried the call (cancelGate), and
// carrying the request's transport extras for the backend.
func (h *handler) served(ctx context.Context, req *mcpsdk.CallToolRequest) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	endWith := func(other context.Context) {
		stop := context.AfterFunc(other, cancel)
		inner := cancel
		cancel = func() { stop(); inner() }
	}
	if h.opts.Stop != nil {
		endWith(h.opts.Stop)
	}
	if req != nil {
		ctx = context.WithValue(traced(ctx, req), extraKey{}, req.Extra)
		if req.Extra != nil {
			if post := h.opts.gate.postContext(req.Extra.Header); post != nil {
				endWith(post) // the client is gone: nobody to answer
			}
		}
	}
	return ctx, cancel
}

func (h *handler) call(ctx context.Context, req *mcpsdk.CallToolRequest, x asker) (*mcpsdk.CallToolResult, Result, error) {
	ctx, cancel := h.served(ctx, req)
	defer cancel()
	var raw json.RawMessage
	if req != nil && req.Params != nil {
		raw = req.Params.Arguments
	}
	in, err := x.ask(raw)
	if err != nil {
		return nil, Result{}, h.toolError(err)
	}
	stateless := speaksStateless(req)
	if stateless && req.Params.RequestState != "" {
		return h.retry(ctx, req, in.Kind) // the host's reply (inputrequired.go)
	}
	in.Route = h.opts.Route
	named := in.RunID != ""
	if !named {
		in.RunID, named = h.runID(ctx, req)
	}
	q, repeat, err := h.ask(ctx, in)
	if err != nil {
		return nil, Result{}, h.askFailed(in, err)
	}
	if repeat && !named && in.ToolCallID != "" {
		// The unnamed run never ends: an old id is a new call (repeat.go).
		if closed, stale := h.staleRepeat(ctx, q); stale {
			h.opts.Logger.Info("askbridge mcp: a reused tool_call_id was refused", "question", q.ID, "closed", closed)
			return nil, Result{}, h.toolError(reusedCallID(in.ToolCallID, closed))
		}
	}
	if slot := taskSlotFrom(ctx); slot != nil {
		slot.q = q // a task: the middleware returns it, and the host follows it (tasks.go)
		return h.open(Status{QuestionID: q.ID, Kind: q.Kind, AskedAt: q.CreatedAt})
	}
	if stateless && h.hostMayAnswer(ctx, req.ClientCapabilities(), q.ID) {
		return inputRequired(q, "", 0), Result{}, nil
	}
	// The place among the question's waiters is taken before the host is
	// asked, so a call past the bound puts no form before its user.
	release, ok := h.waiting.Take(q.ID, h.opts.MaxWaitsPerQuestion)
	if !ok {
		return h.crowded(ctx, q.ID)
	}
	defer release()
	stop := h.elicit(ctx, req, q)
	defer stop()
	return h.awaitHeld(ctx, req, q.ID, -1)
}

// getAnswer serves get_answer: it looks the question up (waiting up to
// wait_seconds), and parks nothing.
func (h *handler) getAnswer(ctx context.Context, req *mcpsdk.CallToolRequest, in getAnswerInput) (*mcpsdk.CallToolResult, Result, error) {
	ctx, cancel := h.served(ctx, req)
	defer cancel()
	if in.QuestionID == "" {
		return nil, Result{}, invalid("question_id is required")
	}
	if in.WaitSeconds < 0 {
		return nil, Result{}, invalid("wait_seconds must not be negative")
	}
	return h.await(ctx, req, in.QuestionID, waitOf(in.WaitSeconds))
}

// waitOf is get_answer's wait for wait_seconds: at most MaxGetAnswerWait,
// capped before it becomes a duration, so a huge number cannot wrap round
// to a negative one (which await reads as no bound at all).
func waitOf(seconds int) time.Duration {
	return time.Duration(min(seconds, int(MaxGetAnswerWait/time.Second))) * time.Second
}

// runID is the run a question is bound to when the call names none: the
// configured one; else the MCP session's; else, over HTTP with no session
// (a 2026-07-28 client), the caller's own (callerRun), which every
// replica gives alike, so that a call sent again to another replica is
// the same tool call in the same run and parks once; else (stdio) the
// server's, made once. named is false for the last two, runs that end
// with nothing the caller did, so their tool_call_ids are reused across
// conversations (reuseWindow).
func (h *handler) runID(ctx context.Context, req *mcpsdk.CallToolRequest) (run core.RunID, named bool) {
	if h.opts.RunID != "" {
		return h.opts.RunID, true
	}
	if req != nil && req.Session != nil {
		if id := req.Session.ID(); id != "" && len(id) <= core.MaxIDLen-4 {
			return core.RunID("mcp-" + id), true
		}
	}
	if agent := CallerFrom(ctx); agent != "" {
		return callerRun(agent), false
	}
	return h.run, false
}

// callerRun is the run of agent's calls that name none and have no
// session: "mcp-<agent>", or, for a name that leaves no room for the
// prefix within an id's limit, "mcp-" and a digest of the name.
func callerRun(agent core.AgentID) core.RunID {
	if len(agent) > core.MaxIDLen-4 {
		sum := sha256.Sum256([]byte(agent))
		return core.RunID("mcp-" + hex.EncodeToString(sum[:16]))
	}
	return core.RunID("mcp-" + agent)
}

// await waits until the question closes, in slices of WaitSlice with a
// progress notification before each, and returns its resume, as long as
// the caller's token still holds (Options.Still) after each. limit < 0
// waits until it closes or the call ends (the asking tools: the call
// ending leaves the question parked, and the result says so); otherwise
// await returns the question's open status after limit (get_answer), or
// by then says the wait failed, when the bridge cannot be reached.
//
// A call that waits (limit other than 0) takes a place among the
// question's waiters first; past their bound it waits not at all
// (crowded).
func (h *handler) await(ctx context.Context, req *mcpsdk.CallToolRequest, id core.QuestionID, limit time.Duration) (*mcpsdk.CallToolResult, Result, error) {
	if limit != 0 {
		release, ok := h.waiting.Take(id, h.opts.MaxWaitsPerQuestion)
		if !ok {
			return h.crowded(ctx, id)
		}
		defer release()
	}
	return h.awaitHeld(ctx, req, id, limit)
}

// awaitHeld is await for a call that holds its place among the
// question's waiters already, or does not wait (limit 0).
func (h *handler) awaitHeld(ctx context.Context, req *mcpsdk.CallToolRequest, id core.QuestionID, limit time.Duration) (*mcpsdk.CallToolResult, Result, error) {
	start, failures := time.Now(), 0
	var lastFail error // why the last read of the question failed; nil once one succeeds
	// slice is how long the next wait, or the pause after a failed one,
	// may take: a slice, or what is left of get_answer's bound, so that a
	// bridge that is down holds no call past the bound it asked for.
	slice := func() time.Duration {
		if limit < 0 {
			return h.opts.WaitSlice
		}
		return max(min(h.opts.WaitSlice, limit-time.Since(start)), 0)
	}
	// ended is the result of a call that ended before the question closed:
	// parked, or, when the last read of it failed, not known.
	ended := func() (*mcpsdk.CallToolResult, Result, error) {
		if lastFail != nil {
			return h.unread(id, "the tool call ended, and the last try to read it had failed: "+h.safeMessage(lastFail))
		}
		return h.parked(id, "the tool call ended before anyone answered")
	}
	for n := 0; ; n++ {
		if n > 0 || limit != 0 {
			h.progress(ctx, req, id, n, time.Since(start))
		}
		st, err := h.b.Wait(ctx, id, slice())
		if !stillHolds(ctx) {
			// Checked after each slice, so before the next and before an
			// answer that came in this one is handed over.
			return nil, Result{}, h.toolError(core.Errorf(core.CodeForbidden, "wait",
				"the token this call came with no longer holds (a reload removed or changed it), so the call ends here and is told nothing of how its question stands"))
		}
		h.heard(err)
		if err == nil {
			failures, lastFail = 0, nil
			if st.State.Closed() {
				return h.resume(st) // an answer that raced the end of the call still counts
			}
		}
		if ctx.Err() != nil {
			return ended()
		}
		switch {
		case err == nil:
			if limit >= 0 && time.Since(start) >= limit {
				return h.open(st)
			}
		case errors.Is(err, context.DeadlineExceeded):
			// A backend may report the end of a slice as an error.
		case transient(err):
			if why := h.misaddressed(err); why != "" {
				return h.unread(id, why) // a setting to fix: no retry mends it
			}
			failures, lastFail = failures+1, err
			h.opts.Logger.Warn("askbridge mcp: waiting for a question failed", "question", id, "attempt", failures, "err", err)
			rest := slice()
			if failures >= maxWaitFailures || rest <= 0 {
				return h.unread(id, "waiting for the answer failed: "+h.safeMessage(err))
			}
			if !loops.Sleep(ctx, rest) {
				return ended()
			}
		default:
			// Not found, forbidden: there is nothing to wait on.
			return nil, Result{}, h.toolError(err)
		}
	}
}

// transient reports whether a failed wait is worth repeating: the bridge
// unreachable or failing on its side.
func transient(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u) || core.ErrorCode(err) == core.CodeInternal
}

// progress tells the client that the call is alive, if it gave a progress
// token; over HTTP without one, it keeps the call's stream alive with a
// comment instead (keepalive.go). A notification that cannot be sent
// changes nothing: the wait goes on.
func (h *handler) progress(ctx context.Context, req *mcpsdk.CallToolRequest, id core.QuestionID, n int, waited time.Duration) {
	if req == nil || req.Params == nil {
		return
	}
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		h.keepAlive(req)
		return
	}
	err := req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      float64(n),
		Message:       fmt.Sprintf("Waiting for a human to answer question %s (%s so far).", id, waited.Round(time.Second)),
	})
	if err != nil && ctx.Err() == nil {
		h.opts.Logger.Debug("askbridge mcp: progress notification not sent", "question", id, "err", err)
	}
}

// resume is the successful result of a closed question: the resume the
// bridge built, unchanged, as text for the model and data beside it.
func (h *handler) resume(st Status) (*mcpsdk.CallToolResult, Result, error) {
	if st.Resume == nil {
		return nil, Result{}, h.toolError(core.Internal("mcp", fmt.Errorf("question %s is %s but came without a resume", st.QuestionID, st.State)))
	}
	s := st.Resume.Structured
	out := Result{
		QuestionID:      st.QuestionID,
		State:           st.State,
		Kind:            st.Kind,
		ChosenOptionID:  s.ChosenOptionID,
		Approved:        s.Approved,
		ArgumentsSHA256: s.ArgumentsSHA256,
		Items:           s.Items,
		approvalExtra: approvalExtra{Edited: s.Edited, ApprovedArguments: s.ApprovedArguments, AskedArgumentsSHA256: s.AskedArgumentsSHA256,
			Standing: s.Standing, Calls: s.Calls},
		quorumExtra: quorumExtra{Votes: s.Votes},
	}
	content := []mcpsdk.Content{&mcpsdk.TextContent{Text: st.Resume.Text}}
	for _, c := range st.Calls { // a batch: each call's own result, fenced as the bridge built it
		content = append(content, &mcpsdk.TextContent{Text: c.Resume.Text})
	}
	return &mcpsdk.CallToolResult{Content: content}, out, nil
}

// open is get_answer's result for a question still open: not an error,
// and only server-made text.
func (h *handler) open(st Status) (*mcpsdk.CallToolResult, Result, error) {
	waited := time.Duration(0)
	if !st.AskedAt.IsZero() {
		waited = max(time.Since(st.AskedAt), 0).Round(time.Second)
	}
	text := fmt.Sprintf("Question %s is still open: nobody has answered it yet (it has waited %s). "+
		"Call %s again later with this question_id, or go on with other work; do not ask the same question again.", st.QuestionID, waited, ToolGetAnswer)
	out := Result{QuestionID: st.QuestionID, State: core.StateOpen, Kind: st.Kind, WaitedSeconds: int64(waited / time.Second)}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, out, nil
}

// parked is the error result of a call that ended while its question is
// still open. Only the server-made id and server text are in it.
func (h *handler) parked(id core.QuestionID, why string) (*mcpsdk.CallToolResult, Result, error) {
	text := fmt.Sprintf("Question %s is still parked and open: %s. Nobody has answered it yet. "+
		"An answer given later is kept under this id: collect it with the %s tool (question_id %q), and do not ask the same question again.", id, why, ToolGetAnswer, id)
	res := &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}
	return res, Result{QuestionID: id, State: core.StateOpen}, nil
}

// unread is the error result of a call that ended while its question
// could not be read (the bridge unreachable, say): whether anyone has
// answered it is not known, and the text says so rather than "nobody
// has". The structured state stays open: the output schema's state enum
// has no value for a state not known, and the question is still parked
// under its id, whatever became of it meanwhile.
func (h *handler) unread(id core.QuestionID, why string) (*mcpsdk.CallToolResult, Result, error) {
	text := fmt.Sprintf("Question %s: its state could not be read: %s; it stays parked, ask again: "+
		"call the %s tool later with question_id %q (an answer given meanwhile is kept under this id), and do not ask the same question again.",
		id, why, ToolGetAnswer, id)
	res := &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}
	return res, Result{QuestionID: id, State: core.StateOpen}, nil
}

// safeMessage is what a caller may read of err: an unreachable bridge's
// own message, or core's caller-safe message in the tools' field names.
func (h *handler) safeMessage(err error) string {
	var u *UnavailableError
	if errors.As(err, &u) {
		return u.Message
	}
	if h.unavailable(err) {
		return core.UnavailableMessage
	}
	return fieldNames.Replace(core.ErrorMessage(err))
}

// toolError is what a caller sees of err. Internal detail goes to the log
// only.
func (h *handler) toolError(err error) error {
	var u *UnavailableError
	if core.ErrorCode(err) == core.CodeInternal && !errors.As(err, &u) {
		h.opts.Logger.Error("askbridge mcp: tool call failed", "err", err)
	}
	return errors.New(h.safeMessage(err))
}
