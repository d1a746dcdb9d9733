package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
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
// the question to chat, and the retry waits for it as a plain call does;
// a reply that is no elicitation result is refused (-32602), as
// tasks/update refuses one, and its form stands to be answered again.
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
// the request state, then the question's result.
//
// Only a reply under the key of the form as it stands counts, and only
// one that is an elicitation result (notAReply). One under
// another key of the host door answers a form that chat has changed since
// (it answered an item): as the extension asks of a key superseded, none
// of it is recorded, and the host is asked what is left.
//
// A passing failure of the server (it may be restarting, or its store
// failing over) is ridden out as a wait rides it out, a wait slice
// between tries: the reply is the one copy of a person's answer, and the
// host does not send it again once the call has a result. Each try reads
// the question afresh, so a write that failed after it landed is seen
// (the question closed, or its form changed: staleNote says what is in)
// rather than recorded twice. A failure that outlasts the tries ends with
// the question's id to follow, saying the answer may not have been
// recorded: an error with no id would leave the model to ask again, and
// people asked twice.
func (h *handler) retry(ctx context.Context, req *mcpsdk.CallToolRequest, kind core.Kind) (*mcpsdk.CallToolResult, Result, error) {
	id, round, ok := parseState(req.Params.RequestState)
	if !ok {
		return nil, Result{}, invalid("requestState is not one this server gave")
	}
	for failures := 1; ; failures++ {
		res, r, err := h.reply(ctx, req, kind, id, round)
		var p passing
		if !errors.As(err, &p) {
			return res, r, err
		}
		if why := h.misaddressed(p.err); why != "" {
			return h.unread(id, "the answer given in the host could not be recorded: "+why)
		}
		h.opts.Logger.Warn("askbridge mcp: the host's reply met a failure", "question", id, "attempt", failures, "err", p.err)
		if failures >= maxWaitFailures || !loops.Sleep(ctx, h.opts.WaitSlice) {
			return h.unread(id, "the answer given in the host may not have been recorded: "+h.safeMessage(p.err))
		}
	}
}

// passing is a reply that met a passing failure of the server (transient),
// for retry to try again.
type passing struct{ err error }

func (p passing) Error() string { return p.err.Error() }

// reply is one try of retry: read question id, and record the host's
// reply to its form as asked in round; a passing failure on the way is a
// passing error when the request carries an answer that it would lose.
func (h *handler) reply(ctx context.Context, req *mcpsdk.CallToolRequest, kind core.Kind, id core.QuestionID, round int) (*mcpsdk.CallToolResult, Result, error) {
	st, err := h.b.Wait(ctx, id, 0)
	h.heard(err)
	if transient(err) {
		if !answers(req.Params.InputResponses) {
			return h.await(ctx, req, id, -1) // nothing to lose: wait as a plain call does
		}
		return nil, Result{}, passing{err}
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
	key := hostKey(id, f, round)
	if r, ok := req.Params.InputResponses[key]; ok && !isReply(r) {
		return nil, Result{}, notAReply(key, id) // as tasks/update refuses one
	}
	reply, stale := hostReply(req.Params.InputResponses, key)
	switch {
	case reply == nil && stale != nil && stale.Action == "accept":
		return h.askAgain(ctx, req, id, round, staleNote(st.Question, stale.Content))
	case reply == nil || reply.Action != "accept":
		return h.await(ctx, req, id, -1) // declined, or no reply: wait for chat
	}
	in, err := f.answer(reply.Content)
	if err == nil {
		in.QuestionID = id
		err = h.b.AnswerInHost(ctx, in)
	}
	if transient(err) {
		return nil, Result{}, passing{err} // recorded or not: the next try reads which
	}
	if _, lost := closedBy(err); err != nil && !lost {
		// The reply was refused (an option that is not one, say): ask again,
		// saying why.
		return h.askAgain(ctx, req, id, round, fmt.Sprintf("Your answer was not recorded: %s", h.safeMessage(err)))
	}
	return h.await(ctx, req, id, -1)
}

// answers reports whether responses carry an accepted reply to a form of
// the host door: a person's answer, which a failure must not drop.
func answers(responses mcpsdk.InputResponseMap) bool {
	for k, v := range responses {
		if r, ok := v.(*mcpsdk.ElicitResult); ok && r.Action == "accept" && strings.HasPrefix(k, hostKeyPrefix) {
			return true
		}
	}
	return false
}

// notRecorded heads the form asked again after a reply to a form
// superseded since.
const notRecorded = "it answered an earlier form of this question, which has changed since (chat may have answered part of it)"

// staleNote is what the host is told of a reply to a form of q that has
// changed since. The host's own answers change a form too: a retry the
// host sent again (its first POST cut after its reply was recorded)
// answers the form as it was. So the items of the reply that q records
// as the host's answers, the same ones, are told to be in; only the rest
// of the reply, if any, was not recorded.
func staleNote(q *core.Question, content map[string]any) string {
	var in, out []int
	if q.Kind == core.KindForm {
		for i, it := range q.Items {
			opt, free := text(content, itemField(i)), text(content, itemField(i)+"_text")
			if opt == "" && free == "" {
				continue
			}
			if a, done := q.Answered(it.ID); done && a.Decider.Surface == core.SurfaceMCP && sameItemAnswer(a, opt, free) {
				in = append(in, i+1)
			} else {
				out = append(out, i+1)
			}
		}
	}
	switch {
	case len(in) == 0:
		return "Your answer was not recorded: " + notRecorded + ". Answer this one."
	case len(out) == 0:
		return fmt.Sprintf("Your %s in. Answer the rest here.", answersTo(in))
	}
	return fmt.Sprintf("Your %s in; the rest of your reply was not recorded: %s. Answer the rest here.", answersTo(in), notRecorded)
}

// sameItemAnswer reports whether a records the option opt, or else the
// free text free. A backend that hands over the agent's view of the
// question leaves a free text's words out; an item answered in free text
// by the host is then taken as this one.
func sameItemAnswer(a core.ItemAnswer, opt, free string) bool {
	if opt != "" {
		return a.OptionID == opt
	}
	return a.OptionID == "" && (a.Text == "" || a.Text == free)
}

// answersTo names the items numbered n (as the form numbers them):
// "answer to question 2 is", "answers to questions 1 and 3 are".
func answersTo(n []int) string {
	if len(n) == 1 {
		return fmt.Sprintf("answer to question %d is", n[0])
	}
	s := make([]string, len(n))
	for i, v := range n {
		s[i] = strconv.Itoa(v)
	}
	return fmt.Sprintf("answers to questions %s and %s are", strings.Join(s[:len(s)-1], ", "), s[len(s)-1])
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
