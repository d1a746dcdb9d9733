package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
)

// The Tasks extension (io.modelcontextprotocol/tasks). A host that
// declares it in a 2026-07-28 request's capabilities gets a task back at
// once from each tool that parks a question, and follows it with
// tasks/get, tasks/update and tasks/cancel, as long as it likes and
// through whichever replica: a wait for a person outlives any request,
// and any host process.
//
// The question is the task. Its id is the question's id, and every task
// method reads the question from the store and answers from it, so no
// task state lives in memory: a task survives a restart of askbridge, and
// any replica serves it. A task is its agent's alone: another agent's id
// reads as an unknown one.
//
// How a question maps to a task's status:
//
//	open, the host may answer it       input_required (one elicitation)
//	open                               working
//	answered, declined, timed out,
//	expired, withdrawn by an operator  completed, with the tool's result
//	withdrawn by its agent             cancelled
//
// The host's reply to the elicitation comes with tasks/update and goes
// through the chokepoint like any answer; a reply that declines leaves the
// question open for chat, and is kept (HostDeclines): the task is working
// again, as the form, answered, is not asked under its key again. The
// key follows what the form asks
// (hostkey.go): once chat or the host has answered part of a form, what
// is left is a new request. tasks/cancel withdraws the question. Over
// HTTP a host may listen for the tasks' ends instead of polling
// (listen.go).

// tasksExtension names the extension in capabilities.
const tasksExtension = "io.modelcontextprotocol/tasks"

// The task methods.
const (
	methodTaskGet    = "tasks/get"
	methodTaskUpdate = "tasks/update"
	methodTaskCancel = "tasks/cancel"
)

// JSON-RPC error codes the extension and 2026-07-28 name.
const (
	codeInvalidParams     = -32602
	codeInternalError     = -32603
	codeMissingCapability = -32021
)

// DefaultTaskPoll is Options.TaskPoll when it is zero: how often a host
// is asked to poll a task. A person takes minutes; a poll is one store read.
const DefaultTaskPoll = 5 * time.Second

// Task statuses.
const (
	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusCancelled     = "cancelled"
)

// Result types (2026-07-28's discriminator; "task" is the extension's).
const (
	resultComplete = "complete"
	resultTask     = "task"
)

// task is the extension's DetailedTask: a Task with the fields of its
// status.
type task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is how long from its asking the task can be read: its
	// question is kept for the retention after it closes, and closes by
	// its deadline, then reads as not found (ttlOf). Null, "unlimited",
	// only where the door cannot know the retention.
	TTLMs          *int64                 `json:"ttlMs"`
	PollIntervalMs int64                  `json:"pollIntervalMs,omitempty"`
	InputRequests  mcpsdk.InputRequestMap `json:"inputRequests,omitempty"`
	Result         *mcpsdk.CallToolResult `json:"result,omitempty"`
}

// taskResult is CreateTaskResult (resultType "task") and GetTaskResult
// (resultType "complete").
type taskResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"`
	task
}

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
type ackResult struct {
	mcpsdk.ResultBase
	ResultType string `json:"resultType"`
}

func ack() (*ackResult, error) { return &ackResult{ResultType: resultComplete}, nil }

type taskParams struct {
	mcpsdk.ParamsBase
	TaskID string `json:"taskId"`
}

type updateParams struct {
	mcpsdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// addTasks registers the task methods and the middleware that turns a
// parking tool call into a task.
func (h *handler) addTasks(s *mcpsdk.Server) {
	s.AddReceivingMiddleware(h.taskMiddleware)
	must(mcpsdk.AddReceivingCustomMethod(s, methodTaskGet, h.taskGet))
	must(mcpsdk.AddReceivingCustomMethod(s, methodTaskUpdate, h.taskUpdate))
	must(mcpsdk.AddReceivingCustomMethod(s, methodTaskCancel, h.taskCancel))
}

func must(err error) {
	if err != nil {
		panic(err) // a method name clashing with the SDK's: a programming error
	}
}

// taskSlot is where a tool call in task mode leaves the question it
// parked, for the middleware to return as a task.
type taskSlot struct{ q *core.Question }

type taskSlotKey struct{}

func taskSlotFrom(ctx context.Context) *taskSlot {
	s, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	return s
}

// parking are the tools that park a question, and so may return a task.
var parking = map[string]bool{ToolClarification: true, ToolDecision: true, ToolApproval: true, ToolQuestions: true}

// taskMiddleware hands every request's transport extras to the handlers
// (custom methods get no request of their own), and returns a task for a
// parking tool call from a client that declared the extension: the tool
// parks its question as usual (its input checked as usual) and returns at
// once, and the task is the question as it now stands.
//
// It is also the backstop under every method: the SDK runs a request's
// handler on a goroutine of its own, with nothing to recover a panic, so
// one bad request would end the whole process (every agent's calls and
// streams with it). A panic is logged, and the request gets an internal
// error.
func (h *handler) taskMiddleware(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (res mcpsdk.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				h.opts.Logger.Error("askbridge mcp: a request's handler panicked", "method", method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				res, err = nil, errInternal
			}
		}()
		ctx = context.WithValue(ctx, extraKey{}, req.GetExtra())
		call, ok := req.(*mcpsdk.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil || !parking[call.Params.Name] ||
			call.ProtocolVersion() < protocolStateless || !declaresTasks(call.ClientCapabilities()) {
			return next(ctx, method, req)
		}
		slot := &taskSlot{}
		res, err = next(context.WithValue(ctx, taskSlotKey{}, slot), method, req)
		if err != nil || slot.q == nil {
			return res, err // refused before anything was parked: the tool's own error
		}
		st, err := h.statusOfParked(ctx, slot.q)
		if err != nil {
			return nil, h.taskError(err)
		}
		t, err := h.taskOf(ctx, st, call.ClientCapabilities())
		if err != nil {
			return nil, h.taskError(err)
		}
		return &taskResult{ResultType: resultTask, task: t}, nil
	}
}

// statusOfParked is the status of q as the tool just parked it. A
// question closed already (a rule or a standing approval decided it, or
// the same call was asked again after it was answered) is read back from
// the backend, whose status carries the resume built on the whole
// question: the backend may hand back only the agent's view of q, which
// leaves out who closed it and what they said.
func (h *handler) statusOfParked(ctx context.Context, q *core.Question) (Status, error) {
	if q.Open() {
		return StatusOf(q)
	}
	return h.b.Wait(ctx, q.ID, 0)
}

// declaresTasks reports whether capabilities declare the extension.
func declaresTasks(c *mcpsdk.ClientCapabilities) bool {
	if c == nil {
		return false
	}
	_, ok := c.Extensions[tasksExtension]
	return ok
}

// capsOf are the capabilities a task method's request declares: in its
// _meta (2026-07-28), or else those its session opened with.
func capsOf(ss *mcpsdk.ServerSession, meta mcpsdk.Meta) *mcpsdk.ClientCapabilities {
	if raw, ok := meta[mcpsdk.MetaKeyClientCapabilities]; ok {
		b, err := json.Marshal(raw)
		var c mcpsdk.ClientCapabilities
		if err == nil && json.Unmarshal(b, &c) == nil {
			return &c
		}
		return nil
	}
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			return ip.Capabilities
		}
	}
	return nil
}

// missingCapability is the extension's error for a task method from a
// client that did not declare it.
func missingCapability() error {
	return &jsonrpc.Error{Code: codeMissingCapability, Message: "Missing required client capability: " + tasksExtension,
		Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`)}
}

// paramsRequired answers a task method sent without params: the SDK lets
// a custom method through without them.
var paramsRequired = &jsonrpc.Error{Code: codeInvalidParams, Message: "params are required"}

// errInternal answers a request whose handler panicked (taskMiddleware,
// and a task listen's goroutines): its detail goes to the log only.
var errInternal = &jsonrpc.Error{Code: codeInternalError, Message: "internal error"}

// taskNotFound is the one answer for an unknown id and another agent's
// (law 6), worded as the extension's example.
var taskNotFound = &jsonrpc.Error{Code: codeInvalidParams, Message: "Failed to retrieve task: Task not found"}

// taskError is what a caller sees of a failed task method: not found, a
// refusal in core's caller-safe words, a store unavailable for a moment
// (the backend's own words, or core's), or an internal error whose detail
// goes to the log only.
func (h *handler) taskError(err error) error {
	var u *UnavailableError
	switch code := core.ErrorCode(err); {
	case errors.Is(err, core.ErrNotFound) || code == core.CodeNotFound:
		return taskNotFound
	case errors.As(err, &u):
		return &jsonrpc.Error{Code: codeInternalError, Message: u.Message}
	case h.unavailable(err):
		// Not now rather than broken: the caller is told so, and tries
		// again, as a tool's caller is.
		h.opts.Logger.Warn("askbridge mcp: the store is unavailable", "err", err)
		return &jsonrpc.Error{Code: codeInternalError, Message: core.UnavailableMessage}
	case code == core.CodeInternal || code == "":
		h.opts.Logger.Error("askbridge mcp: task method failed", "err", err)
		return &jsonrpc.Error{Code: codeInternalError, Message: "internal error"}
	default:
		return &jsonrpc.Error{Code: codeInvalidParams, Message: h.safeMessage(err)}
	}
}

// ownTask reads the task's question, as its agent may see it: a task's
// id is its question's.
func (h *handler) ownTask(ctx context.Context, taskID string) (Status, error) {
	if taskID == "" {
		return Status{}, taskNotFound
	}
	st, err := h.b.Wait(ctx, core.QuestionID(taskID), 0)
	if err != nil {
		return Status{}, h.taskError(err)
	}
	return st, nil
}

func (h *handler) taskGet(ctx context.Context, ss *mcpsdk.ServerSession, p *taskParams) (*taskResult, error) {
	if p == nil {
		return nil, paramsRequired
	}
	caps := capsOf(ss, p.Meta)
	if !declaresTasks(caps) {
		return nil, missingCapability()
	}
	st, err := h.ownTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	t, err := h.taskOf(ctx, st, caps)
	if err != nil {
		return nil, h.taskError(err)
	}
	return &taskResult{ResultType: resultComplete, task: t}, nil
}

// taskUpdate takes the host's reply to the task's form. A reply to a
// request that is not outstanding (the question closed, the host may not
// answer it, or the form was superseded: its key is not the key of the
// form as it stands) is ignored, as the extension asks; an accepted form
// is an answer, judged by the chokepoint, and one that lost to chat is
// ignored too: tasks/get shows who answered. One core refuses, and one
// that is no elicitation result (its action not accept, decline or
// cancel), is an error, so the request stays unanswered under its key.
func (h *handler) taskUpdate(ctx context.Context, ss *mcpsdk.ServerSession, p *updateParams) (*ackResult, error) {
	if p == nil {
		return nil, paramsRequired
	}
	if !declaresTasks(capsOf(ss, p.Meta)) {
		return nil, missingCapability()
	}
	st, err := h.ownTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if st.State.Closed() || st.Question == nil {
		return ack()
	}
	f := formFor(st.Question)
	key := hostKey(st.QuestionID, f, 0)
	raw, ok := p.InputResponses[key]
	if !ok {
		return ack()
	}
	var reply mcpsdk.ElicitResult
	if err := json.Unmarshal(raw, &reply); err != nil || !isReply(&reply) {
		return nil, notAReply(key, st.QuestionID)
	}
	if reply.Action != "accept" {
		h.opts.Logger.Debug("askbridge mcp: the host did not answer", "question", st.QuestionID, "action", reply.Action)
		// Declined or dismissed: the question waits for chat, and the
		// form, answered, is not asked again (HostDeclines).
		if hd, ok := h.b.(HostDeclines); ok {
			if err := hd.DeclineHostForm(ctx, st.QuestionID, key); err != nil {
				return nil, h.taskError(err)
			}
		}
		return ack()
	}
	if h.declined(ctx, st.QuestionID, key) {
		return ack() // a reply to a form already answered with a decline
	}
	may, err := h.b.HostMayAnswer(ctx, st.QuestionID)
	if err != nil {
		return nil, h.taskError(err)
	}
	if !may {
		return ack()
	}
	in, err := f.answer(reply.Content)
	if err == nil {
		in.QuestionID = st.QuestionID
		err = h.b.AnswerInHost(ctx, in)
	}
	if _, lost := closedBy(err); err == nil || lost {
		return ack()
	}
	return nil, h.taskError(err)
}

// taskCancel withdraws the task's question. A question that closed first
// keeps its outcome: cancelling is cooperative.
func (h *handler) taskCancel(ctx context.Context, ss *mcpsdk.ServerSession, p *taskParams) (*ackResult, error) {
	if p == nil {
		return nil, paramsRequired
	}
	if !declaresTasks(capsOf(ss, p.Meta)) {
		return nil, missingCapability()
	}
	st, err := h.ownTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if st.State.Closed() {
		return ack()
	}
	err = h.b.Withdraw(ctx, st.QuestionID, "withdrawn by the agent's host (its task was cancelled)")
	if _, lost := closedBy(err); err == nil || lost {
		return ack()
	}
	return nil, h.taskError(err)
}

// taskOf is the task that the question's status is, for a client with
// caps.
func (h *handler) taskOf(ctx context.Context, st Status, caps *mcpsdk.ClientCapabilities) (task, error) {
	t := task{
		TaskID:         string(st.QuestionID),
		CreatedAt:      isoTime(st.AskedAt),
		LastUpdatedAt:  isoTime(st.AskedAt),
		PollIntervalMs: h.opts.TaskPoll.Milliseconds(),
	}
	if !st.ClosedAt.IsZero() {
		t.LastUpdatedAt = isoTime(st.ClosedAt)
	}
	t.TTLMs = h.ttlOf(st)
	switch {
	case st.State == core.StateCancelled && !byOperator(st):
		t.Status = statusCancelled
		t.StatusMessage = fmt.Sprintf("Question %s was withdrawn: nobody will answer it.", st.QuestionID)
	case st.State.Closed():
		res, err := h.toolResult(st)
		if err != nil {
			return task{}, err
		}
		t.Status, t.Result = statusCompleted, res
		t.StatusMessage = fmt.Sprintf("Question %s closed: %s.", st.QuestionID, st.State)
	default:
		t.Status = statusWorking
		t.StatusMessage = fmt.Sprintf("Waiting for a human to answer question %s.", st.QuestionID)
		if st.Question != nil && h.hostMayAnswer(ctx, caps, st.QuestionID) {
			f := formFor(st.Question)
			if h.declined(ctx, st.QuestionID, hostKey(st.QuestionID, f, 0)) {
				t.StatusMessage = fmt.Sprintf("Waiting for a human to answer question %s in chat; the form here was declined.", st.QuestionID)
				break
			}
			t.Status = statusInputRequired
			t.StatusMessage = fmt.Sprintf("Question %s waits for an answer: yours here, or one in chat; the first counts.", st.QuestionID)
			t.InputRequests = formRequest(st.QuestionID, f, 0, "")
		}
	}
	return t, nil
}

// byOperator reports whether an operator withdrew st's question. That
// is no cancel of the host's request, which the extension's cancelled
// status is: the tool call ends with a result, as a blocking call does,
// whose resume says who withdrew the question and why, and keeps the
// outcomes of a batch's calls decided before it (law 12). The task
// carries that result (completed), as the extension has tasks/get return
// what the request would have. A question its own agent withdrew (its
// host's tasks/cancel) is the task cancelled; one whose closer cannot be
// read is taken as that, as before.
func byOperator(st Status) bool {
	return st.Question != nil && core.CloserOf(st.Question) == core.CloserOperatorCancel
}

// takesForms reports whether capabilities take form elicitations.
func takesForms(c *mcpsdk.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil // {} means form
}

// toolResult is what the asking tool would have returned for the closed
// question: the resume as text, and the tool's own structured part.
func (h *handler) toolResult(st Status) (*mcpsdk.CallToolResult, error) {
	res, out, err := h.resume(st)
	if err != nil {
		return nil, err
	}
	switch st.Kind {
	case core.KindClarification:
		res.StructuredContent = asClarification(out)
	case core.KindDecision:
		res.StructuredContent = asDecision(out)
	case core.KindApproval:
		res.StructuredContent = asApproval(out)
	case core.KindForm:
		res.StructuredContent = asQuestions(out)
	default:
		res.StructuredContent = out
	}
	return res, nil
}

func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
