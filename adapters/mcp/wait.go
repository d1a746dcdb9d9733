package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// maxWaitFailures is how many waits in a row may fail with an internal
// error (the backend briefly unreachable, a server restarting) before a
// call gives up. The question is durable, so giving up leaves it parked.
const maxWaitFailures = 5

// handler serves every tool: park the question, then wait for it.
type handler struct {
	b    Backend
	opts Options
	run  string // the run id of last resort, made once per server
}

func (h *handler) call(ctx context.Context, req *mcpsdk.CallToolRequest, x asker) (*mcpsdk.CallToolResult, Result, error) {
	if h.opts.Stop != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(h.opts.Stop, cancel)()
	}
	var raw json.RawMessage
	if req != nil {
		ctx = context.WithValue(ctx, extraKey{}, req.Extra)
		if req.Params != nil {
			raw = req.Params.Arguments
		}
	}
	in, err := x.ask(raw)
	if err != nil {
		return nil, Result{}, h.toolError(err)
	}
	in.Route = h.opts.Route
	if in.RunID == "" {
		in.RunID = h.runID(req)
	}
	q, err := h.b.Ask(ctx, in)
	if err != nil {
		return nil, Result{}, h.toolError(err)
	}
	return h.await(ctx, req, q)
}

// runID is the run a question is bound to when the call names none.
func (h *handler) runID(req *mcpsdk.CallToolRequest) string {
	if h.opts.RunID != "" {
		return h.opts.RunID
	}
	if req != nil && req.Session != nil {
		if id := req.Session.ID(); id != "" && len(id) <= 100 {
			return "mcp-" + id
		}
	}
	return h.run
}

// await blocks until q closes, in slices of WaitSlice with a progress
// notification before each, and returns its resume. If the call ends
// first, the question stays parked and the result says so.
func (h *handler) await(ctx context.Context, req *mcpsdk.CallToolRequest, q *core.Question) (*mcpsdk.CallToolResult, Result, error) {
	id, start, failures := q.ID, time.Now(), 0
	for n := 0; ; n++ {
		if q.State.Closed() {
			return h.resume(q)
		}
		h.progress(ctx, req, id, n, time.Since(start))
		slice, cancel := context.WithTimeout(ctx, h.opts.WaitSlice)
		got, err := h.b.Wait(slice, id)
		cancel()
		if err == nil && got != nil {
			q = got
			if q.State.Closed() {
				continue // an answer that raced the end of the call still counts
			}
		}
		if ctx.Err() != nil {
			return h.parked(id, "the tool call ended before anyone answered")
		}
		switch {
		case err == nil, errors.Is(err, context.DeadlineExceeded):
			// The slice ended (a backend may report that as an error).
			failures = 0
		case core.ErrorCode(err) == core.CodeInternal:
			failures++
			h.opts.Logger.Warn("askbridge mcp: waiting for a question failed", "question", id, "attempt", failures, "err", err)
			if failures >= maxWaitFailures {
				return h.parked(id, "waiting for the answer failed: "+core.ErrorMessage(err))
			}
			if !h.pause(ctx) {
				return h.parked(id, "the tool call ended before anyone answered")
			}
		default:
			// Not found, forbidden: there is nothing to wait on.
			return nil, Result{}, h.toolError(err)
		}
	}
}

// pause waits one slice, or less if ctx ends; it reports whether ctx is
// still live.
func (h *handler) pause(ctx context.Context) bool {
	t := time.NewTimer(h.opts.WaitSlice)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// progress tells the client that the call is alive, if it gave a progress
// token. A notification that cannot be sent changes nothing: the wait goes
// on.
func (h *handler) progress(ctx context.Context, req *mcpsdk.CallToolRequest, id string, n int, waited time.Duration) {
	if req == nil || req.Params == nil || req.Session == nil {
		return
	}
	token := req.Params.GetProgressToken()
	if token == nil {
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

// resume is the successful result of a closed question: the fenced text
// for the model, and the structured result beside it.
func (h *handler) resume(q *core.Question) (*mcpsdk.CallToolResult, Result, error) {
	r, err := core.ResumeOf(q)
	if err != nil {
		return nil, Result{}, h.toolError(err)
	}
	st := r.Structured
	out := Result{
		QuestionID:      q.ID,
		State:           q.State,
		ChosenOptionID:  st.ChosenOptionID,
		Approved:        st.Approved,
		ArgumentsSHA256: st.ArgumentsSHA256,
		Items:           st.Items,
	}
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: r.Text}}}, out, nil
}

// parked is the error result of a call that ended while its question is
// still open. Only the server-made id and server text are in it.
func (h *handler) parked(id, why string) (*mcpsdk.CallToolResult, Result, error) {
	text := fmt.Sprintf("Question %s is still parked and open: %s. Nobody has answered it yet. "+
		"An answer given later is kept under this id and can be collected by it (askbridge's API and CLI wait on a question by id), so do not ask the same question again.", id, why)
	res := &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}
	return res, Result{QuestionID: id, State: core.StateOpen}, nil
}

// toolError is what a caller sees of err: core's caller-safe message, in
// the tools' own field names. Internal detail goes to the log only.
func (h *handler) toolError(err error) error {
	if core.ErrorCode(err) == core.CodeInternal {
		h.opts.Logger.Error("askbridge mcp: tool call failed", "err", err)
	}
	return errors.New(fieldNames.Replace(core.ErrorMessage(err)))
}
