package mcp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// The host as one more door. When the client declares the elicitation
// capability and the question's route lists the agent under the mcp
// surface, a tool call also asks the person driving the host, through
// elicitation/create, while the question waits for chat as usual. Whoever
// answers first wins through core's chokepoint: if chat wins, the
// elicitation is withdrawn (the SDK sends notifications/cancelled for it);
// a host reply that arrives after all is refused, and the host is told who
// answered. A host that declines leaves the question open for chat.
//
// Each kind's answer fits a flat form, and the form asks only for the
// answer itself: never for credentials or anything else.

// noop is what elicit returns when it asks nobody.
func noop() {}

// elicit asks the host's user about q, if the client and the route allow
// it. The returned stop withdraws the elicitation and waits for it to end,
// so nothing outlives the call.
func (h *handler) elicit(ctx context.Context, req *mcpsdk.CallToolRequest, q *core.Question) (stop func()) {
	if req == nil || req.Session == nil || !canElicit(req.Session) ||
		!h.hostMayAnswer(ctx, req.Session.InitializeParams().Capabilities, q.ID) {
		return noop
	}
	f := formFor(q)
	// The elicitation goes out on a context that carries the call's end
	// but none of its values. Over streamable HTTP, a request tied to the
	// call travels on the call's own stream, and so would the SDK's
	// notifications/cancelled that withdraws it; that notice is sent after
	// the SDK gives up the request, by when the call's result may have
	// closed the stream, and the host would keep showing a form nobody
	// reads. Untied, both travel on the session's standing stream, which
	// outlives the call.
	untied, cancelUntied := context.WithCancel(context.Background())
	unlink := context.AfterFunc(ctx, cancelUntied)
	tied, cancelTied := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.askHost(untied, tied, ctx, req.Session, q, f)
	}()
	return func() {
		unlink()
		cancelUntied()
		cancelTied()
		<-done
	}
}

// errRejected is the SDK's transport refusing to send a message, as it does
// over streamable HTTP when the session has no standing stream.
var errRejected = &jsonrpc.Error{Code: -32005}

// canElicit reports whether the client takes form elicitations as
// requests of their own: clients of the revisions with sessions.
func canElicit(ss *mcpsdk.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion < protocolStateless && takesForms(ip.Capabilities)
}

// askHost runs one elicitation and records the reply. untied and tied end
// when the question closes another way (see elicit); a client with no
// standing stream is asked on the call's own. The answer itself is
// recorded under the call's ctx, so a reply already received is judged by
// the chokepoint rather than dropped halfway.
func (h *handler) askHost(untied, tied, ctx context.Context, ss *mcpsdk.ServerSession, q *core.Question, f hostForm) {
	params := &mcpsdk.ElicitParams{Mode: "form", Message: f.message, RequestedSchema: f.schema}
	ectx := untied
	res, err := ss.Elicit(ectx, params)
	if errors.Is(err, errRejected) && untied.Err() == nil {
		ectx = tied
		res, err = ss.Elicit(ectx, params)
	}
	switch {
	case err != nil:
		if ectx.Err() == nil {
			h.opts.Logger.Warn("askbridge mcp: elicitation failed", "question", q.ID, "err", err)
		}
		return
	case res.Action != "accept":
		h.opts.Logger.Debug("askbridge mcp: the host did not answer", "question", q.ID, "action", res.Action)
		return // declined or dismissed: the question waits for chat
	}
	in, err := f.answer(res.Content)
	if err == nil {
		in.QuestionID = q.ID
		err = h.b.AnswerInHost(ctx, in)
	}
	if err != nil && q.Kind == core.KindForm && core.ErrorCode(err) == core.CodeConflict {
		var taken []core.FormItem
		if taken, err = h.answerOpenItems(ctx, in, err); err == nil {
			h.tellHost(ctx, ss, takenItems(q.ID, taken))
			return
		}
	}
	if err == nil {
		return
	}
	h.tellHost(ctx, ss, hostRefusal(q.ID, err))
}

// answerOpenItems records a form reply again without the items chat
// answered while the host's user filled it in (refused is how the first
// try was refused), so that the user's other answers count. It returns
// the items left out; refused again when there is nothing left to record
// or the form cannot be read.
func (h *handler) answerOpenItems(ctx context.Context, in core.AnswerInput, refused error) ([]core.FormItem, error) {
	st, err := h.b.Wait(ctx, in.QuestionID, 0)
	q := st.Question
	if err != nil || q == nil || !q.Open() {
		return nil, refused
	}
	var open []core.ItemInput
	var taken []core.FormItem
	for _, a := range in.Items {
		if _, done := q.Answered(a.ItemID); !done {
			open = append(open, a)
		} else if it, ok := q.Item(a.ItemID); ok {
			taken = append(taken, it)
		}
	}
	if len(taken) == 0 || len(open) == 0 {
		return nil, refused
	}
	in.Items = open
	return taken, h.b.AnswerInHost(ctx, in)
}

// takenItems tells the host's user which of their answers were not
// recorded because chat answered those items first.
func takenItems(id core.QuestionID, taken []core.FormItem) string {
	var qs []string
	for _, it := range taken {
		qs = append(qs, strconv.Quote(it.Question))
	}
	return fmt.Sprintf("Your answers to question %s were recorded, but not those to %s: chat answered those first.",
		id, strings.Join(qs, ", "))
}

// hostRefusal is what the host's user hears of a reply that was not
// recorded: who closed the question first, or why the reply was refused.
func hostRefusal(id core.QuestionID, err error) string {
	if cq, ok := closedBy(err); ok && cq.Resolution != nil {
		r := cq.Resolution
		who := core.ActorText(r.Decider)
		at := r.At.UTC().Format("2006-01-02T15:04:05Z")
		switch cq.State {
		case core.StateAnswered:
			return fmt.Sprintf("Your answer to question %s was not recorded: it was already answered by %s at %s.", id, who, at)
		case core.StateDeclined:
			return fmt.Sprintf("Your answer to question %s was not recorded: it was already declined by %s at %s.", id, who, at)
		default:
			return fmt.Sprintf("Your answer to question %s was not recorded: it was already closed as %s at %s.", id, cq.State, at)
		}
	}
	return fmt.Sprintf("Your answer to question %s was not recorded: %s", id, core.ErrorMessage(err))
}

// tellHost sends the host a warning it can show its user. A client that
// has not set a log level gets none (the SDK's rule); the refusal is in
// the event log either way.
func (h *handler) tellHost(ctx context.Context, ss *mcpsdk.ServerSession, msg string) {
	h.opts.Logger.Info("askbridge mcp: "+msg, "surface", "mcp")
	err := ss.Log(ctx, &mcpsdk.LoggingMessageParams{Level: "warning", Logger: "askbridge", Data: msg})
	if err != nil {
		h.opts.Logger.Debug("askbridge mcp: cannot tell the host", "err", err)
	}
}

// hostForm is one question as an elicitation: the message and flat schema
// shown to the host's user, and how to read their reply as an answer.
type hostForm struct {
	message string
	schema  *jsonschema.Schema
	answer  func(map[string]any) (core.AnswerInput, error)
}

// Property names of the forms.
const (
	fieldAnswer  = "answer"
	fieldOption  = "option"
	fieldNote    = "note"
	fieldVerdict = "verdict"
	fieldReason  = "reason"
)

// elicitActions are the actions a host's reply to a form may take
// (ElicitResult in testdata/tasks/schema.json); a reply with any other
// is no reply.
var elicitActions = map[string]bool{"accept": true, "decline": true, "cancel": true}

// isReply reports whether r, a response under the key of a form of the
// host door, is an elicitation result, the one kind of reply a form
// takes.
func isReply(r mcpsdk.InputResponse) bool {
	e, ok := r.(*mcpsdk.ElicitResult)
	return ok && e != nil && elicitActions[e.Action]
}

// notAReply refuses a response under the key of question id's form that
// is no elicitation result (-32602: the pinned schema's InputResponse
// for an elicitation is an ElicitResult, whose action is required and
// one of accept, decline or cancel). Kept as a decline, or read as no
// reply, it would drop the host's answer for good; refused, the request
// stays outstanding under its key, for the host to answer again.
func notAReply(key string, id core.QuestionID) error {
	return &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf(
		"inputResponses[%q] is not an elicitation result: its action must be accept, decline or cancel; question %s stays parked and its form stands, to be answered again",
		key, id)}
}

func str(title, desc string, maxLen int) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Title: title, Description: desc, MaxLength: jsonschema.Ptr(maxLen)}
}

// choice is a single-select string whose options carry titles.
func choice(title, desc string, ids, titles []string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Title: title, Description: desc}
	for i, id := range ids {
		s.OneOf = append(s.OneOf, &jsonschema.Schema{Const: jsonschema.Ptr[any](id), Title: titles[i]})
	}
	return s
}

func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required}
}

func text(content map[string]any, key string) string {
	s, _ := content[key].(string)
	return strings.TrimSpace(s)
}

// formFor is the elicitation for q's kind.
func formFor(q *core.Question) hostForm {
	var b strings.Builder
	fmt.Fprintf(&b, "An agent asks (askbridge question %s; the question is posted to chat too, and the first answer counts):\n\n%s", q.ID, q.Text)
	if q.Context != "" {
		fmt.Fprintf(&b, "\n\n%s", q.Context)
	}
	f := hostForm{}
	switch q.Kind {
	case core.KindClarification:
		f.schema = object([]string{fieldAnswer}, map[string]*jsonschema.Schema{
			fieldAnswer: str("Your answer", "", core.MaxAnswerLen),
		})
		f.schema.Properties[fieldAnswer].MinLength = jsonschema.Ptr(1)
		f.answer = func(c map[string]any) (core.AnswerInput, error) {
			return core.AnswerInput{Text: text(c, fieldAnswer)}, nil
		}
	case core.KindDecision:
		var ids, titles []string
		for _, o := range q.Options {
			title := o.Title
			if o.Recommended {
				title += " (recommended)"
			}
			ids, titles = append(ids, o.ID), append(titles, title)
			fmt.Fprintf(&b, "\n\n%s: %s", title, o.Writeup)
		}
		f.schema = object([]string{fieldOption}, map[string]*jsonschema.Schema{
			fieldOption: choice("Your choice", "", ids, titles),
			fieldNote:   str("Note (optional)", "Anything the agent should know about your choice.", core.MaxReasonLen),
		})
		f.answer = func(c map[string]any) (core.AnswerInput, error) {
			return core.AnswerInput{OptionID: text(c, fieldOption), Text: text(c, fieldNote)}, nil
		}
	case core.KindApproval:
		approve, deny := "Approve this call", "Deny it"
		if q.Call != nil {
			fmt.Fprintf(&b, "\n\nTool: %s\nArguments: %s", q.Call.Tool, core.PrettyJSON(q.Call.Arguments))
		}
		if q.IsBatch() {
			// The verdict is every undecided call's: each is shown, as a
			// card shows it, so the person sees what they approve.
			approve, deny = "Approve every call listed", "Deny every call listed"
			b.WriteString("\n\nThe verdict applies to each of these calls:")
			for _, c := range q.UndecidedCalls() {
				fmt.Fprintf(&b, "\n\n%s: %s\nArguments: %s", c.ToolCallID, c.Tool, core.PrettyJSON(c.Arguments))
			}
		}
		f.schema = object([]string{fieldVerdict}, map[string]*jsonschema.Schema{
			fieldVerdict: choice("Your verdict", "", []string{core.ApproveOption, core.DenyOption}, []string{approve, deny}),
			fieldReason:  str("Reason (optional)", "Why, in a line.", core.MaxReasonLen),
		})
		f.answer = func(c map[string]any) (core.AnswerInput, error) {
			return core.AnswerInput{OptionID: text(c, fieldVerdict), Text: text(c, fieldReason)}, nil
		}
	case core.KindForm:
		// Items answered in chat already are left out: they take no
		// other answer, and a reply to one would be refused.
		props := map[string]*jsonschema.Schema{}
		for i, it := range q.Items {
			if _, done := q.Answered(it.ID); done {
				continue
			}
			fmt.Fprintf(&b, "\n\n%d. %s", i+1, it.Question)
			var ids, titles []string
			for _, o := range it.Options {
				title := o.Label
				if o.Description != "" {
					title += ": " + o.Description
				}
				if o.Recommended {
					title += " (recommended)"
				}
				ids, titles = append(ids, o.ID), append(titles, title)
			}
			props[itemField(i)] = choice(it.Question, "Choose one, or answer in your own words below.", ids, titles)
			props[itemField(i)+"_text"] = str("Or, in your own words", "", core.MaxAnswerLen)
		}
		f.schema = object(nil, props)
		f.answer = func(c map[string]any) (core.AnswerInput, error) {
			var in core.AnswerInput
			for i, it := range q.Items {
				if _, done := q.Answered(it.ID); done {
					continue
				}
				a := core.ItemInput{ItemID: it.ID, OptionID: text(c, itemField(i))}
				if a.OptionID == "" {
					a.Text = text(c, itemField(i)+"_text")
				}
				if a.OptionID != "" || a.Text != "" {
					in.Items = append(in.Items, a)
				}
			}
			if len(in.Items) == 0 {
				return in, invalid("no question was answered")
			}
			return in, nil
		}
	}
	f.message = b.String()
	return f
}

func itemField(i int) string { return fmt.Sprintf("q%d", i+1) }
