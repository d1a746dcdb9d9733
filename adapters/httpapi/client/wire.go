package client

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// The wire types of the HTTP API live here, in one place, and the server
// (package httpapi) decodes and encodes these very types, so the two sides
// cannot drift apart. They live in the client package rather than in
// httpapi so that an agent importing the client does not pull in the
// server, its logger and its routing.
//
// A question goes out as one of two types of its own (question.go): the
// agent's allowlisted view and the operator's. The other domain objects
// below are core's own types, aliased: none of them reaches an agent.

// Event is one entry of the event log as the events stream carries it.
type Event = core.Event

// Digest is what GET /v1/digest returns: core's digest with each
// question as operators read it (OperatorView), so it names no one-way
// door's recipient and carries none of the bridge's bookkeeping.
type Digest struct {
	From   time.Time   `json:"from"`
	To     time.Time   `json:"to"`
	Asked  []*Question `json:"asked"`
	Closed []*Question `json:"closed"`
	Open   []*Question `json:"open"`
	// AskedMore, ClosedMore and OpenMore say that list stopped at its
	// cap: its length is then a floor, not the count.
	AskedMore  bool `json:"asked_more,omitempty"`
	ClosedMore bool `json:"closed_more,omitempty"`
	OpenMore   bool `json:"open_more,omitempty"`
}

// DigestOf is d as GET /v1/digest shows it. Its lists are [] rather than
// null, so clients can range without a check.
func DigestOf(d core.Digest) Digest {
	return Digest{From: d.From, To: d.To, Asked: OperatorViews(d.Asked), Closed: OperatorViews(d.Closed), Open: OperatorViews(d.Open),
		AskedMore: d.AskedMore, ClosedMore: d.ClosedMore, OpenMore: d.OpenMore}
}

// Directory is what GET /v1/people returns.
type Directory = core.Directory

// Resume is the fenced text an agent's model resumes with, and the same
// result as data.
type Resume = fence.Resume

// ItemAnswer answers one form item: an option id, or free text.
type ItemAnswer = core.ItemInput

// Duration is a time.Duration that travels as duration text such as "30m"
// or "1d12h", read by core's one parser (core.ParseDuration), so the
// client and the server read the same forms. Unlike core.Duration, which
// also reads stored records, it takes no bare number: 1800 would be
// nanoseconds, never what a caller sending it meant.
type Duration core.Duration

func (d Duration) String() string { return core.Duration(d).String() }

func (d Duration) MarshalJSON() ([]byte, error) { return core.Duration(d).MarshalJSON() }

// UnmarshalJSON takes duration text alone. Its refusal is plain: the
// decoder it runs under names the field.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is text: a %s, not a number", core.DurationForms)
	}
	return (*core.Duration)(d).UnmarshalJSON(b)
}

// AskRequest is the body of POST /v1/questions. The asking agent is the
// token's name; there is no field for it.
type AskRequest struct {
	Kind          core.Kind          `json:"kind"`
	Question      string             `json:"question"`
	Context       string             `json:"context,omitempty"`
	Reversibility core.Reversibility `json:"reversibility"`
	Route         string             `json:"route,omitempty"`
	RunID         core.RunID         `json:"run_id"`
	ToolCallID    string             `json:"tool_call_id,omitempty"`
	Options       []core.Option      `json:"options,omitempty"`   // decision
	Items         []core.FormItem    `json:"items,omitempty"`     // form
	Tool          string             `json:"tool,omitempty"`      // approval
	Arguments     json.RawMessage    `json:"arguments,omitempty"` // approval
	// Editable lets approvers change the arguments before approving:
	// true for all, or a list of top-level keys (approval).
	Editable *core.Editable `json:"editable,omitempty"`
	// Calls makes an approval a batch of 2 to 20 tool calls, each with
	// its tool_call_id, tool and arguments, posted as one card (instead
	// of Tool and Arguments).
	Calls []core.CallInput `json:"calls,omitempty"`
	// Timeout is the question's deadline, at least one second (the
	// server refuses less); zero is not sent, and takes the server's
	// default.
	Timeout   Duration           `json:"timeout,omitzero"`
	OnTimeout core.TimeoutPolicy `json:"on_timeout,omitempty"`
	MaxReasks int                `json:"max_reasks,omitempty"`
	// Quorum asks for this many different people to agree (approvals
	// and decisions), within what the route allows; 0 takes the route's.
	Quorum int         `json:"quorum,omitempty"`
	Labels core.Labels `json:"labels,omitzero"`
	// CallbackURL is sent the wait's response, signed, when the question
	// closes (README, "Webhooks"). It must be under a prefix the server's
	// webhooks.allow lists; a route may name one for all its questions.
	CallbackURL string `json:"callback_url,omitempty"`
	// IdempotencyKey goes as the Idempotency-Key header, not in the body:
	// asks with the same key (by the same agent) park one question. Asks
	// with a tool call id need none; they are idempotent per run and tool
	// call id.
	IdempotencyKey string `json:"-"`
}

// AnswerRequest is the body of POST /v1/questions/{id}/answer.
//
//   - clarification: Answer.
//   - decision: ChosenOptionID, and Answer as an optional note.
//   - approval: ChosenOptionID "approve" or "deny", and Answer as an
//     optional reason; Arguments with "approve" for edited arguments.
//   - form: Items, one or several at a time.
type AnswerRequest struct {
	Answer         string       `json:"answer,omitempty"`
	ChosenOptionID string       `json:"chosen_option_id,omitempty"`
	Items          []ItemAnswer `json:"items,omitempty"`
	// Arguments, with "approve", approves the call with these arguments
	// instead: only its editable keys may differ.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Standing, with "approve", also grants a standing approval: later
	// asks for the same tool by the same agent, in this run ("run") or
	// for the route's hours ("agent"), are approved at once.
	Standing *core.StandingRequest `json:"standing,omitempty"`
	// Calls decide calls of a batch one by one; a batch answered with
	// ChosenOptionID alone has it applied to every call still undecided.
	Calls []core.CallDecision `json:"calls,omitempty"`
}

// MCPAnswerRequest is the body of POST /v1/questions/{id}/mcp/answer:
// what a host's elicitation can give. The host answers with the agent's
// own token, so editing the call's arguments, deciding a batch's calls one
// by one and granting a standing approval (AnswerRequest's other fields)
// are not among them: an agent may not widen what it is approved for. A
// body carrying them is refused (400), not answered without them.
type MCPAnswerRequest struct {
	Answer         string       `json:"answer,omitempty"`
	ChosenOptionID string       `json:"chosen_option_id,omitempty"`
	Items          []ItemAnswer `json:"items,omitempty"`
}

// CancelRequest is the optional body of POST /v1/questions/{id}/cancel.
type CancelRequest struct {
	Reason string `json:"reason,omitempty"`
}

// Outcome is what answer, decline and an operator's cancel return: the
// question exactly as recorded, and whether this request closed it (false
// when a form item was recorded and the form is still open). Standing is
// the standing approval an approve granted, when it asked for one.
type Outcome struct {
	Question *Question `json:"question"`
	Closed   bool      `json:"closed"`
	Standing *Standing `json:"standing,omitempty"`
}

// AgentOutcome is what an agent's own cancel and its host's answer through
// the MCP door return: Outcome with the agent's view of the question.
type AgentOutcome struct {
	Question *AgentQuestion `json:"question"`
	Closed   bool           `json:"closed"`
}

// Standing is a standing approval as the API lists it.
type Standing = core.Standing

// StandingList is what GET /v1/approvals/standing returns: those live
// now, oldest first.
type StandingList struct {
	Standing []Standing `json:"standing"`
}

// WaitResponse is what GET /v1/questions/{id}/wait returns. While the
// question is open, State is "open" and the resume fields are absent. Once
// it has closed, Resume holds what the agent resumes with, and Anthropic
// and OpenAI hold the same text shaped as each API's tool result for the
// question's tool_call_id (absent when the question has none).
type WaitResponse struct {
	QuestionID core.QuestionID            `json:"question_id"`
	ToolCallID string                     `json:"tool_call_id,omitempty"`
	State      core.State                 `json:"state"`
	Resume     *Resume                    `json:"resume,omitempty"`
	Anthropic  *fence.AnthropicToolResult `json:"anthropic,omitempty"`
	OpenAI     *fence.OpenAIToolResult    `json:"openai,omitempty"`
	// Calls, for a closed batch, hold one result per tool call, in the
	// batch's order, each bound to its own tool call id: hand them back
	// to the model as the calls' tool results.
	Calls []CallResult `json:"calls,omitempty"`
	// Question is the question as the agent may see it.
	Question *AgentQuestion `json:"question"`
}

// CallResult is one tool call's result of a closed batch, in both
// shapes.
type CallResult struct {
	ToolCallID string                    `json:"tool_call_id"`
	Resume     Resume                    `json:"resume"`
	Anthropic  fence.AnthropicToolResult `json:"anthropic"`
	OpenAI     fence.OpenAIToolResult    `json:"openai"`
}

// ListResponse is what GET /v1/questions returns. NextCursor is "" after
// the last page.
type ListResponse struct {
	Questions  []*Question `json:"questions"`
	NextCursor string      `json:"next_cursor"`
}

// EndRunResponse is what POST /v1/runs/{run_id}/end returns: the ids of the
// questions the end of the run expired.
type EndRunResponse struct {
	RunID   core.RunID        `json:"run_id"`
	Expired []core.QuestionID `json:"expired"`
}

// DirectiveResponse is what GET /v1/directive returns.
type DirectiveResponse struct {
	Text string `json:"text"`
}

// ErrorBody is every error response: {"error":{"code","message"}}. Code is
// one of core's codes (invalid, not_found, forbidden, conflict, internal).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    core.Code `json:"code"`
	Message string    `json:"message"`
}

// MCPDoorResponse is what GET /v1/questions/{id}/mcp returns: whether the
// person driving the agent's MCP host may answer the question there (it is
// open, and its route lists the agent's token name under the mcp surface).
type MCPDoorResponse struct {
	QuestionID core.QuestionID `json:"question_id"`
	MayAnswer  bool            `json:"may_answer"`
}

// MCPDeclineRequest is the body of POST /v1/questions/{id}/mcp/decline:
// the key of the task's form (its inputRequests key) that the agent's MCP
// host declined.
type MCPDeclineRequest struct {
	Key string `json:"key"`
}

// MCPDeclineResponse is what POST and GET /v1/questions/{id}/mcp/decline
// return: whether the host declined form Key of the question. The bridge
// keeps a decline as /mcp keeps its own (for as long as the question can
// be open, on every replica), so a task whose form was declined stops
// asking for it.
type MCPDeclineResponse struct {
	QuestionID core.QuestionID `json:"question_id"`
	Key        string          `json:"key"`
	Declined   bool            `json:"declined"`
}

// RetentionResponse is what GET /v1/retention returns: how long the
// bridge keeps a question once it has closed (the configuration's
// policies.retention, as it stands), after which it reads as unknown.
// An MCP task's ttlMs is made from it.
type RetentionResponse struct {
	Retention Duration `json:"retention"`
}

// ConfigDigest is what GET /v1/config/digest returns: the SHA-256 (hex)
// of the configuration file this replica runs and when it was loaded, so
// an operator can see that every replica runs the same file. Refused,
// when set, is the last file this replica read and refused since.
type ConfigDigest struct {
	Digest   string         `json:"digest"`
	LoadedAt time.Time      `json:"loaded_at"`
	Refused  *RefusedConfig `json:"refused,omitempty"`
}

// RefusedConfig is a configuration file read and refused: the running
// one stayed.
type RefusedConfig struct {
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
	Error  string    `json:"error"`
}

// AskRequestOf is an ask as the client sends it, for a program that
// holds a core.AskInput (the stdio MCP process does). in.Agent is not
// sent: the server takes the agent from the token.
func AskRequestOf(in core.AskInput) AskRequest {
	return AskRequest{
		Kind: in.Kind, Question: in.Text, Context: in.Context, Reversibility: in.Reversibility,
		Route: in.Route, RunID: in.RunID, ToolCallID: in.ToolCallID, Options: in.Options, Items: in.Items,
		Tool: in.Tool, Arguments: in.Arguments, Editable: in.Editable, Calls: in.Calls,
		Timeout: Duration(in.Timeout), OnTimeout: in.OnTimeout, MaxReasks: in.MaxReasks, Quorum: in.Quorum,
		Labels: in.Labels, CallbackURL: in.CallbackURL, IdempotencyKey: in.IdempotencyKey,
	}
}

// Input is the ask as core takes it, asked by agent (whom the server
// knows by the token). It is AskRequestOf's inverse: every field of one
// is a field of the other.
func (r AskRequest) Input(agent core.AgentID) core.AskInput {
	return core.AskInput{
		Kind: r.Kind, Agent: agent, RunID: r.RunID, ToolCallID: r.ToolCallID, Labels: r.Labels,
		Text: r.Question, Context: r.Context, Reversibility: r.Reversibility, Route: r.Route,
		Options: r.Options, Items: r.Items, Tool: r.Tool, Arguments: r.Arguments, Editable: r.Editable,
		Calls: r.Calls, Timeout: time.Duration(r.Timeout), OnTimeout: r.OnTimeout, MaxReasks: r.MaxReasks,
		Quorum: r.Quorum, CallbackURL: r.CallbackURL, IdempotencyKey: r.IdempotencyKey,
	}
}
