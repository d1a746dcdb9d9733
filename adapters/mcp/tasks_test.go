package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestTaskFixtures: the specification's own examples pass the pinned
// schema, and the test's client reads them as the tests read askbridge.
func TestTaskFixtures(t *testing.T) {
	s := newSchemaCheck(t)
	read := func(name string) json.RawMessage {
		b, err := os.ReadFile(filepath.Join("testdata", "tasks", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, method := range map[string]string{
		"create-task-response.json":             "tools/call",
		"get-task-working-response.json":        "tasks/get",
		"get-task-input-required-response.json": "tasks/get",
		"get-task-completed-response.json":      "tasks/get",
		"ack-response.json":                     "tasks/update",
		"task-not-found-response.json":          "tasks/get",
		"missing-capability-response.json":      "tasks/get",
	} {
		s.message(method, read(name))
	}
	var create struct{ Result json.RawMessage }
	_ = json.Unmarshal(read("create-task-response.json"), &create)
	if w := asTask(t, create.Result); w.Status != "working" || w.PollIntervalMs != 5000 {
		t.Errorf("create-task-response reads as %+v", w)
	}
	var ir struct{ Result wireTask }
	_ = json.Unmarshal(read("get-task-input-required-response.json"), &ir)
	if r, ok := ir.Result.InputRequests["name"]; !ok || r.Method != "elicitation/create" || r.Params.Mode != "form" {
		t.Errorf("input requests read as %+v", ir.Result.InputRequests)
	}
	var upd struct {
		Method string
		Params struct {
			TaskID         string                     `json:"taskId"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		}
	}
	_ = json.Unmarshal(read("update-task-request.json"), &upd)
	var reply mcpsdk.ElicitResult
	if err := json.Unmarshal(upd.Params.InputResponses["name"], &reply); err != nil || reply.Action != "accept" || reply.Content["input"] != "Luca" {
		t.Errorf("the update's response reads as %+v (%v)", reply, err)
	}
	var notFound struct{ Error rpcError }
	_ = json.Unmarshal(read("task-not-found-response.json"), &notFound)
	var missing struct{ Error rpcError }
	_ = json.Unmarshal(read("missing-capability-response.json"), &missing)
	if notFound.Error.Code != -32602 || missing.Error.Code != -32021 {
		t.Errorf("error codes %d, %d", notFound.Error.Code, missing.Error.Code)
	}
}

// taskEnv is askbridge over one store behind several replicas, and
// hosts that speak the Tasks extension through a balancer.
type taskEnv struct {
	t      *testing.T
	ctx    context.Context
	svc    *core.Service
	clock  *core.SimClock
	r      *replicas
	schema *schemaCheck
}

func newTaskEnv(t *testing.T) *taskEnv { t.Helper(); return newTaskEnvWith(t, nil) }

// newTaskEnvWith is newTaskEnv with its replicas' options changed by tune.
func newTaskEnvWith(t *testing.T, tune func(*mcp.Options)) *taskEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	clock := core.NewSimClock(time.Now())
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock, Routes: map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}, core.SurfaceMCP: {"alice"}}},
		"chat-only":       {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
	}})
	e := &taskEnv{t: t, ctx: ctx, svc: svc, clock: clock, schema: newSchemaCheck(t)}
	opts := mcp.Options{Caller: agentOf, TaskPoll: 250 * time.Millisecond, Version: "test", Clock: clock, Retention: svc.Retention}
	if tune != nil {
		tune(&opts)
	}
	e.r = newReplicas(t, svc, 3, opts)
	return e
}

// host is a host of agent token tok with caps, its requests balanced
// over the replicas.
func (e *taskEnv) host(token string, caps map[string]any) *taskClient {
	c := &taskClient{t: e.t, http: &http.Client{Transport: &balancer{r: e.r, token: token}}, url: e.r.urls[0].String(), caps: caps}
	c.raw = e.schema.message
	return c
}

func (e *taskEnv) answer(in core.AnswerInput) {
	e.t.Helper()
	in.Decider = operator
	if _, err := e.svc.Answer(e.ctx, in); err != nil {
		e.t.Fatalf("answer: %v", err)
	}
}

// completed reads the task's result as the asking tool's result.
func completed(t *testing.T, w wireTask) *mcpsdk.CallToolResult {
	t.Helper()
	if w.Status != "completed" || w.Result == nil {
		t.Fatalf("task is %s (%s), want completed with a result", w.Status, w.StatusMessage)
	}
	var res mcpsdk.CallToolResult
	if err := json.Unmarshal(w.Result, &res); err != nil {
		t.Fatalf("result %s: %v", w.Result, err)
	}
	return &res
}

// parkingCalls are the four tools that park, each with valid arguments.
var parkingCalls = []struct {
	tool string
	args map[string]any
	kind core.Kind
}{
	{mcp.ToolClarification, map[string]any{"question": "Which region?", "reversibility": "reversible"}, core.KindClarification},
	{mcp.ToolDecision, map[string]any{"question": "Which queue?", "reversibility": "hard_to_reverse", "options": []map[string]any{
		{"id": "sqs", "title": "SQS", "writeup": "Managed.", "recommended": true}, {"id": "nats", "title": "NATS", "writeup": "Ours to run."}}}, core.KindDecision},
	{mcp.ToolApproval, map[string]any{"tool": "deploy", "arguments": map[string]any{"env": "prod"}, "reversibility": "hard_to_reverse"}, core.KindApproval},
	{mcp.ToolQuestions, map[string]any{"reversibility": "reversible", "questions": []map[string]any{
		{"id": "lang", "question": "Language?", "options": []map[string]any{{"id": "go", "label": "Go"}, {"id": "rs", "label": "Rust"}}}}}, core.KindForm},
}

// TestTaskPerTool: each parking tool returns a task at once to a host
// that declares the extension; polling it through other replicas shows
// it working, and once a person answers, completed with what the tool
// would have returned, structured content and all. Every message passes
// the pinned schema.
func TestTaskPerTool(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(false))
	answers := map[core.Kind]core.AnswerInput{
		core.KindClarification: {Text: "eu-west-1"},
		core.KindDecision:      {OptionID: "sqs"},
		core.KindApproval:      {OptionID: core.ApproveOption},
		core.KindForm:          {Items: []core.ItemInput{{ItemID: "lang", OptionID: "go"}}},
	}
	for _, c := range parkingCalls {
		t.Run(c.tool, func(t *testing.T) {
			raw, err := h.callTool(e.ctx, c.tool, c.args)
			if err != nil {
				t.Fatal(err)
			}
			w := asTask(t, raw)
			q, err := e.svc.Get(e.ctx, core.QuestionID(w.TaskID))
			if err != nil || q.Kind != c.kind || q.Agent != "alice" || !q.Open() {
				t.Fatalf("the task's question: %+v, %v", q, err)
			}
			// Readable until the retention after its close, which comes
			// by its deadline at the latest.
			if ttl := q.Deadline.Add(e.svc.Retention()).Sub(q.CreatedAt).Milliseconds(); w.Status != "working" || w.PollIntervalMs != 250 || w.TTLMs == nil || *w.TTLMs != ttl || w.CreatedAt == "" {
				t.Errorf("created task %+v, want ttlMs %d", w, ttl)
			}
			if got, err := h.get(e.ctx, w.TaskID); err != nil || got.Status != "working" || got.ResultType != "complete" {
				t.Fatalf("polled: %+v, %v", got, err)
			}
			in := answers[c.kind]
			in.QuestionID = q.ID
			e.answer(in)
			got, err := h.get(e.ctx, w.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			closed, _ := e.svc.Get(e.ctx, q.ID)
			if ttl := closed.Resolution.At.Add(e.svc.Retention()).Sub(q.CreatedAt).Milliseconds(); got.TTLMs == nil || *got.TTLMs != ttl {
				t.Errorf("completed task's ttlMs %v, want %d: the retention from its close", got.TTLMs, ttl)
			}
			res := completed(t, got)
			p, err := fence.ParseResume(res.Content[0].(*mcpsdk.TextContent).Text)
			if err != nil || p.QuestionID != string(q.ID) || p.Verb != fence.VerbAnswered {
				t.Fatalf("result text: %+v, %v", p, err)
			}
			st := structured(t, res)
			if st.QuestionID != q.ID || st.State != core.StateAnswered {
				t.Errorf("structured content %+v", st)
			}
			switch c.kind {
			case core.KindDecision:
				if st.ChosenOptionID != "sqs" {
					t.Errorf("chosen %q", st.ChosenOptionID)
				}
			case core.KindApproval:
				if st.Approved == nil || !*st.Approved || st.ArgumentsSHA256 == "" {
					t.Errorf("approval %+v", st)
				}
			case core.KindForm:
				if len(st.Items) != 1 || st.Items[0].OptionID != "go" {
					t.Errorf("items %+v", st.Items)
				}
			}
			if _, ok := res.StructuredContent.(map[string]any)["kind"]; ok {
				t.Errorf("the result has get_answer's fields, not the tool's own: %v", res.StructuredContent)
			}
		})
	}
}

// TestTaskEndings: a task ends the way its question does: declined, timed
// out or withdrawn by an operator (completed, with the resume that says
// so, as a blocking call returns it), or withdrawn by its host
// (tasks/cancel: cancelled).
func TestTaskEndings(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(false))
	start := func() wireTask {
		t.Helper()
		raw, err := h.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Go?", "reversibility": "reversible", "timeout": "10m"})
		if err != nil {
			t.Fatal(err)
		}
		return asTask(t, raw)
	}
	get := func(id string) wireTask {
		t.Helper()
		w, err := h.get(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}

	declined := start()
	if _, err := e.svc.Decline(e.ctx, core.QuestionID(declined.TaskID), operator); err != nil {
		t.Fatal(err)
	}
	if st := structured(t, completed(t, get(declined.TaskID))); st.State != core.StateDeclined {
		t.Errorf("declined task's state %s", st.State)
	}

	timedOut := start()
	e.clock.Advance(11 * time.Minute)
	if _, err := e.svc.Tick(e.ctx); err != nil {
		t.Fatal(err)
	}
	if st := structured(t, completed(t, get(timedOut.TaskID))); st.State != core.StateTimedOut {
		t.Errorf("timed-out task's state %s", st.State)
	}

	byHost := start()
	if err := h.cancel(e.ctx, byHost.TaskID); err != nil {
		t.Fatal(err)
	}
	if w := get(byHost.TaskID); w.Status != "cancelled" || w.Result != nil {
		t.Errorf("cancelled by the host: %+v", w)
	}
	q, _ := e.svc.Get(e.ctx, core.QuestionID(byHost.TaskID))
	if q.State != core.StateCancelled || core.CloserOf(q) != core.CloserAgentCancel {
		t.Errorf("the host's cancel left the question %s, closed by %s", q.State, core.CloserOf(q))
	}
	if err := h.cancel(e.ctx, byHost.TaskID); err != nil {
		t.Errorf("cancelling a cancelled task again: %v, want an acknowledgement", err)
	}

	// An operator's withdrawal is no cancel of the host's request: the
	// call ends with the result a blocking call returns, which says who
	// withdrew the question and why (the reason fenced).
	byOperator := start()
	if _, err := e.svc.Cancel(e.ctx, core.CancelInput{QuestionID: core.QuestionID(byOperator.TaskID), By: operator, Reason: "wrong channel, ask in #ops"}); err != nil {
		t.Fatal(err)
	}
	w := get(byOperator.TaskID)
	if w.Status != "completed" {
		t.Fatalf("cancelled by an operator: %+v, want completed with the call's result", w)
	}
	res := completed(t, w)
	p, out := resumed(t, res, core.QuestionID(byOperator.TaskID), fence.VerbCancelled)
	fenced := false
	for _, r := range p.Regions {
		fenced = fenced || strings.Contains(r.Content, "wrong channel, ask in #ops")
	}
	if out.State != core.StateCancelled || !strings.Contains(text(t, res), "An operator withdrew this question") || !fenced {
		t.Errorf("cancelled by an operator: state %s, resume %q", out.State, text(t, res))
	}
	if err := h.cancel(e.ctx, declined.TaskID); err != nil {
		t.Errorf("cancelling a completed task: %v, want an acknowledgement", err)
	}
	if st := structured(t, completed(t, get(declined.TaskID))); st.State != core.StateDeclined {
		t.Errorf("a cancel after the close changed the outcome to %s", st.State)
	}
}

// TestTaskHostDoor: for a host that takes forms, on a route that lists
// its agent under mcp, the task asks the host (input_required, one form);
// the host's reply through tasks/update is an answer recorded at the
// chokepoint as {mcp, agent}. Chat may answer first, and a late reply
// changes nothing.
func TestTaskHostDoor(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(true))
	// The form's key follows what it asks (it was one fixed key for
	// every form): read it from the task.
	keyOf := func(id string) string {
		t.Helper()
		got, err := h.get(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return onlyRequest(t, got.InputRequests).key
	}
	ask := func() wireTask { return h.task(e.ctx, mcp.ToolDecision, queueArgs) }

	w := ask()
	if w.Status != "input_required" {
		t.Fatalf("created %+v, want input_required", w)
	}
	key := keyOf(w.TaskID)
	got, err := h.get(e.ctx, w.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	req, ok := got.InputRequests[key]
	if got.Status != "input_required" || !ok || req.Method != "elicitation/create" || req.Params.Mode != "form" ||
		!strings.Contains(req.Params.Message, "Which queue?") {
		t.Fatalf("polled %+v", got)
	}
	// A reply to a key never asked is ignored; a bad option is refused.
	// (A decline: TestTaskHostDeclineAsksTheFormNoMore.)
	if err := h.update(e.ctx, w.TaskID, map[string]any{"other": map[string]any{"action": "accept", "content": map[string]any{"option": "sqs"}}}); err != nil {
		t.Fatal(err)
	}
	var rerr *rpcError
	if err := h.update(e.ctx, w.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"option": "kafka"}}}); !errors.As(err, &rerr) || rerr.Code != -32602 {
		t.Fatalf("an unknown option: %v, want -32602", err)
	}
	if q, _ := e.svc.Get(e.ctx, core.QuestionID(w.TaskID)); !q.Open() {
		t.Fatalf("an unknown option closed the question: %s", q.State)
	}
	if err := h.update(e.ctx, w.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"option": "nats", "note": "we run it already"}}}); err != nil {
		t.Fatal(err)
	}
	q, _ := e.svc.Get(e.ctx, core.QuestionID(w.TaskID))
	if q.State != core.StateAnswered || q.Resolution.Decider.Surface != core.SurfaceMCP || q.Resolution.Decider.ID != "alice" {
		t.Fatalf("after the host's reply: %s by %+v", q.State, q.Resolution)
	}
	done, err := h.get(e.ctx, w.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if st := structured(t, completed(t, done)); st.ChosenOptionID != "nats" {
		t.Errorf("chosen %q", st.ChosenOptionID)
	}

	// Chat first: the host's late reply is acknowledged and changes nothing.
	w2 := ask()
	key = keyOf(w2.TaskID)
	e.answer(core.AnswerInput{QuestionID: core.QuestionID(w2.TaskID), OptionID: "sqs"})
	if err := h.update(e.ctx, w2.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"option": "nats"}}}); err != nil {
		t.Fatal(err)
	}
	done2, _ := h.get(e.ctx, w2.TaskID)
	if st := structured(t, completed(t, done2)); st.ChosenOptionID != "sqs" {
		t.Errorf("a late host reply changed the outcome to %q", st.ChosenOptionID)
	}
}

// TestTaskOwnershipAndErrors: another agent's task reads as an unknown
// one (-32602, the same message), a host that did not declare the
// extension gets -32021 for the task methods and a plain blocking call
// for the tools, and a 2025-11-25 client gets no task.
func TestTaskOwnershipAndErrors(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	w := alice.task(e.ctx, mcp.ToolClarification, map[string]any{"question": "Mine?", "reversibility": "reversible"})
	mallory := e.host("tok-mallory", tasksCaps(true))
	var theirs, unknown *rpcError
	_, err1 := mallory.get(e.ctx, w.TaskID)
	_, err2 := mallory.get(e.ctx, "no-such-task")
	if !errors.As(err1, &theirs) || !errors.As(err2, &unknown) || theirs.Code != -32602 || theirs.Code != unknown.Code || theirs.Message != unknown.Message {
		t.Fatalf("another agent's task: %v; an unknown one: %v; want the same -32602", err1, err2)
	}
	for _, err := range []error{
		mallory.cancel(e.ctx, w.TaskID),
		mallory.update(e.ctx, w.TaskID, map[string]any{"askbridge-host-answer": map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}}),
	} {
		if !errors.As(err, &theirs) || theirs.Code != -32602 {
			t.Errorf("another agent's task method: %v, want -32602", err)
		}
	}
	if q, _ := e.svc.Get(e.ctx, core.QuestionID(w.TaskID)); !q.Open() {
		t.Fatalf("another agent changed the question: %s", q.State)
	}

	plain := e.host("tok-alice", map[string]any{})
	var missing *rpcError
	if _, err := plain.get(e.ctx, w.TaskID); !errors.As(err, &missing) || missing.Code != -32021 ||
		!strings.Contains(string(missing.Data), `"io.modelcontextprotocol/tasks"`) {
		t.Fatalf("tasks/get without the extension: %v", err)
	}
	if err := plain.cancel(e.ctx, w.TaskID); !errors.As(err, &missing) || missing.Code != -32021 {
		t.Fatalf("tasks/cancel without the extension: %v", err)
	}
	// Without the extension the call blocks until the question closes.
	out := make(chan json.RawMessage, 1)
	go func() {
		raw, err := plain.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Blocking?", "reversibility": "reversible"})
		if err != nil {
			t.Error(err)
		}
		out <- raw
	}()
	q := parkedWith(t, e.ctx, e.svc, "Blocking?")
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "yes"})
	var res struct {
		ResultType string `json:"resultType"`
		IsError    bool   `json:"isError"`
	}
	if err := json.Unmarshal(<-out, &res); err != nil || res.ResultType != "complete" || res.IsError {
		t.Errorf("the blocking call returned %+v (%v)", res, err)
	}
}

// parkedWith waits, within a bound, for the open question with text.
func parkedWith(t *testing.T, ctx context.Context, svc *core.Service, text string) *core.Question {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		qs, _, err := svc.ListOpen(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q.Text == text {
				return q
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("no question %q was parked", text)
		}
	}
}

// TestTaskTTLUnknownIsNull: a door that cannot know how long the bridge
// keeps a question (no Retention) says ttlMs null, as it did, rather than
// a number it made up.
func TestTaskTTLUnknownIsNull(t *testing.T) {
	e := newTaskEnvWith(t, func(o *mcp.Options) { o.Retention = nil })
	h := e.host("tok-alice", tasksCaps(false))
	raw, err := h.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Go?", "reversibility": "reversible"})
	if err != nil {
		t.Fatal(err)
	}
	if w := asTask(t, raw); w.TTLMs != nil {
		t.Fatalf("ttlMs %d without a known retention", *w.TTLMs)
	}
}
