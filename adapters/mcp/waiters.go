package mcp

import (
	"context"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// How many tool calls one question may have waiting on it at once on this
// replica, as the HTTP API bounds its waits (httpapi's waiters.go, with
// the same default). A waiting call holds a goroutine, and over HTTP a
// connection, a file descriptor of the process, for as long as a person
// takes; a host that calls get_answer again without ending the last call,
// or many sessions on one question, would hold the bridge's descriptors
// until every door was refused its next connection. Past the bound a call
// ends at once with the question's state: its answer if it has closed,
// else the parked result, an error result naming the question for
// get_answer later, so the model waits again rather than asks people
// again. The bound is many times what one question's callers need.

// DefaultMaxWaitsPerQuestion is Options.MaxWaitsPerQuestion's default.
const DefaultMaxWaitsPerQuestion = 256

// crowded is the result of a call refused a place among id's waiters:
// the question read once, without waiting; closed, its resume; open, the
// parked result saying why this call does not wait. An id the caller may
// not see reads as it does for any call (law 6): the bound is counted
// before the question is read, and tells a stranger nothing.
func (h *handler) crowded(ctx context.Context, id core.QuestionID) (*mcpsdk.CallToolResult, Result, error) {
	st, err := h.b.Wait(ctx, id, 0)
	switch {
	case err != nil && transient(err):
		return h.unread(id, h.safeMessage(err))
	case err != nil:
		return nil, Result{}, h.toolError(err)
	case st.State.Closed():
		return h.resume(st)
	}
	max := h.opts.MaxWaitsPerQuestion
	h.opts.Logger.Info("askbridge mcp: a call was refused a wait: its question has the most waiting calls", "question", id, "most", max)
	return h.parked(id, fmt.Sprintf("calls already waiting on it on this server: %d, the most it holds at once, so this call does not wait too "+
		"(end the calls you no longer need: an answer reaches every waiting call at once)", max))
}
