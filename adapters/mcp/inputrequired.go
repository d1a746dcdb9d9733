package mcp

import (
	"context"
	"fmt"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// The host door for 2026-07-28, which has no server-initiated requests:
// a tool call whose question the host may answer (the route lists the
// agent under mcp, and the client takes forms) parks the question and
// returns at once an input_required result, the question as a form, with
// the question's id as the request state. The client asks its user and
// retries the call with the reply; the retry records it through the
// chokepoint like any answer and returns the question's result. If chat
// answered first, the reply is refused there and the retry returns the
// closed result, which says who answered; a reply that declines leaves
// the question to chat, and the retry waits for it as a plain call does.
//
// The request state is only an id: a retry may name only its own agent's
// question (any other reads as unknown) of the tool's own kind, and a
// reply can only do what the host could do with the form anyway.
//
// A client that declared the Tasks extension gets a task instead, whose
// form travels through tasks/get and tasks/update (tasks.go); a client of
// an earlier revision is asked with elicitation/create (elicit.go).

// speaksStateless reports whether the request is a 2026-07-28 one.
func speaksStateless(req *mcpsdk.CallToolRequest) bool {
	return req != nil && req.Params != nil && req.ProtocolVersion() >= protocolStateless
}

// inputRequired is a round of a call whose question the host may answer:
// the form under its key for round (hostkey.go), and the state to come
// back with. note, when set, heads the form (why an earlier reply was not
// recorded).
func inputRequired(q *core.Question, note string, round int) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{InputRequests: formRequest(q.ID, formFor(q), round, note), RequestState: stateOf(q.ID, round)}
}

// hostMayAnswer reports whether a host of caps may answer question id in
// a form. When that cannot be told (the store, or the server over stdio,
// failing a moment), the host is not asked: the question is parked
// already, and the caller is told of it, waiting on chat, rather than
// given an error with no id to follow.
func (h *handler) hostMayAnswer(ctx context.Context, caps *mcpsdk.ClientCapabilities, id core.QuestionID) bool {
	if !takesForms(caps) {
		return false
	}
	may, err := h.b.HostMayAnswer(ctx, id)
	if err != nil {
		h.opts.Logger.Warn("askbridge mcp: cannot tell whether the host may answer", "question", id, "err", err)
		return false
	}
	return may
}

// retry serves a later round: the host's reply to the question named by
// the request state, then the question's result. A passing failure of
// the server (it may be restarting) goes on as a wait does, which rides
// it out or ends with the question's id to follow: an error with no id
// would leave the model to ask again, and people asked twice.
//
// Only a reply under the key of the form as it stands counts. One under
// another key of the host door answers a form that chat has changed since
// (it answered an item): as the extension asks of a key superseded, none
// of it is recorded, and the host is asked what is left.
func (h *handler) retry(ctx context.Context, req *mcpsdk.CallToolRequest, kind core.Kind) (*mcpsdk.CallToolResult, Result, error) {
	id, round, ok := parseState(req.Params.RequestState)
	if !ok {
		return nil, Result{}, invalid("requestState is not one this server gave")
	}
	st, err := h.b.Wait(ctx, id, 0)
	if transient(err) {
		return h.await(ctx, req, id, -1)
	}
	if err != nil {
		return nil, Result{}, h.toolError(err)
	}
	if st.Kind != kind {
		return nil, Result{}, invalid("requestState names a question this tool did not ask")
	}
	if st.State.Closed() || st.Question == nil {
		return h.await(ctx, req, id, -1) // nothing to record: the closed result
	}
	f := formFor(st.Question)
	reply, stale := hostReply(req.Params.InputResponses, hostKey(id, f, round))
	switch {
	case reply == nil && stale != nil && stale.Action == "accept":
		return h.askAgain(ctx, req, id, round, "Your answer was not recorded: it answered an earlier form of this question, which has changed since (chat may have answered part of it). Answer this one.")
	case reply == nil || reply.Action != "accept":
		return h.await(ctx, req, id, -1) // declined, or no reply: wait for chat
	}
	in, err := f.answer(reply.Content)
	if err == nil {
		in.QuestionID = id
		err = h.b.AnswerInHost(ctx, in)
	}
	if transient(err) {
		// Whether it was recorded is unknown: the wait below says.
		h.opts.Logger.Warn("askbridge mcp: recording the host's answer failed", "question", id, "err", err)
	}
	if _, lost := closedBy(err); err != nil && !lost && !transient(err) {
		// The reply was refused (an option that is not one, say): ask again,
		// saying why.
		return h.askAgain(ctx, req, id, round, fmt.Sprintf("Your answer was not recorded: %s", h.safeMessage(err)))
	}
	return h.await(ctx, req, id, -1)
}

// askAgain puts question id to the host once more, as it stands now and
// under the next round's key, headed by note; or, if the host may no
// longer answer it (a reload took mcp off its route, say), waits for the
// other surfaces as a plain call does, rather than show the host a form
// whose every reply would be refused.
func (h *handler) askAgain(ctx context.Context, req *mcpsdk.CallToolRequest, id core.QuestionID, round int, note string) (*mcpsdk.CallToolResult, Result, error) {
	st, err := h.b.Wait(ctx, id, 0)
	if err != nil || st.State.Closed() || st.Question == nil || !h.hostMayAnswer(ctx, req.ClientCapabilities(), id) {
		return h.await(ctx, req, id, -1)
	}
	return inputRequired(st.Question, note, round+1), Result{}, nil
}
