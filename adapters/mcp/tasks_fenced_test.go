package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/fence/fencetest"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestNothingUnfencedReachesATaskHost carries law 11's property test to
// the Tasks extension: it plants a hostile marker in every field a person
// writes (answers, notes, reasons, votes, edits, form text, what the
// host's own user types into the task's form) and in every decider's
// name, asks a question of every kind and feature (clarification,
// decision, approval, batch, form; quorum votes, edits, standing
// approvals, policy rules, parts answered before a timeout), and reads
// everything a task's host can: the task a tool call returns, tasks/get
// while it is open (its status message and form) and once it has ended,
// and the task's notification on a subscriptions/listen stream. It fails
// if any marker appears outside a well-formed fenced region, and if a
// marker the task hands over never reached it fenced. Its harness
// (fencetest) is law 11's, shared with the program's and the hook door's
// property tests.
func TestNothingUnfencedReachesATaskHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mk := fencetest.New()
	clock := core.NewSimClock(time.Now())
	api := map[core.Surface][]string{core.SurfaceAPI: {"*"}}
	routes := map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}, core.SurfaceMCP: {"alice"}}},
		"quorum":          {Deciders: api, Quorum: 2, MaxQuorum: 2},
		"policy": {Deciders: api, Rules: []core.Rule{
			{Name: "no-fetch", When: `tool == "fetch"`, Decide: core.DecideDeny, Reason: mk.Carried("a policy rule's deny reason")},
			{Name: "reads", When: `tool == "read_file"`, Decide: core.DecideAllow, Reason: mk.Carried("a policy rule's allow reason")},
		}},
	}
	people := map[string]core.Person{
		"pat":   {DisplayName: mk.Carried("a configured person's display name"), IDs: map[core.Surface][]string{core.SurfaceAPI: {"pat-token"}}},
		"quinn": {DisplayName: mk.Carried("another configured person's display name"), IDs: map[core.Surface][]string{core.SurfaceAPI: {"quinn-token"}}},
	}
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock, Routes: routes, People: people})
	anon := core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: mk.Carried("an API decider's display name")}
	pat := core.Decider{Surface: core.SurfaceAPI, ID: "pat-token"}
	quinn := core.Decider{Surface: core.SurfaceAPI, ID: "quinn-token"}
	// One host per route (a tool call parks on its server's route), each
	// through two replicas, taking forms: the default route's tasks ask
	// the host too.
	hosts := map[string]*taskClient{}
	for route := range routes {
		r := newReplicas(t, svc, 2, mcp.Options{Route: route, Caller: agentOf, WaitSlice: 20 * time.Millisecond, Version: "test", Clock: clock})
		hosts[route] = &taskClient{t: t, http: &http.Client{Transport: &balancer{r: r, token: "tok-alice"}}, url: r.urls[0].String(), caps: tasksCaps(true)}
	}
	host := hosts[core.DefaultRoute]

	type step = func(t *testing.T, id core.QuestionID)
	answer := func(by core.Decider, in core.AnswerInput) step {
		return func(t *testing.T, id core.QuestionID) {
			t.Helper()
			in.QuestionID, in.Decider = id, by
			if _, err := svc.Answer(ctx, in); err != nil {
				t.Fatalf("answer %+v: %v", in, err)
			}
		}
	}
	// inHost is the host's user's reply to the task's form, as it stands.
	inHost := func(content map[string]any) step {
		return func(t *testing.T, id core.QuestionID) {
			t.Helper()
			w, err := host.get(ctx, string(id))
			if err != nil {
				t.Fatal(err)
			}
			key := onlyRequest(t, w.InputRequests).key
			if err := host.update(ctx, string(id), map[string]any{key: map[string]any{"action": "accept", "content": content}}); err != nil {
				t.Fatalf("tasks/update: %v", err)
			}
		}
	}
	timeOut := func(t *testing.T, _ core.QuestionID) {
		clock.Advance(2 * time.Hour)
		if _, err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	args := func(kv ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	clarify := func(q string) map[string]any { return map[string]any{"question": q, "reversibility": "reversible"} }
	decision := map[string]any{"question": "Which queue?", "reversibility": "hard_to_reverse", "options": []map[string]any{
		{"id": "sqs", "title": "SQS", "writeup": "Managed.", "recommended": true}, {"id": "nats", "title": "NATS", "writeup": "Ours to run."}}}
	approval := func(tool string, a map[string]any) map[string]any {
		return map[string]any{"tool": tool, "arguments": a, "reversibility": "hard_to_reverse"}
	}
	form := map[string]any{"reversibility": "reversible", "questions": []map[string]any{
		{"id": "logger", "question": "Which logger?", "options": []map[string]any{{"id": "slog", "label": "slog"}, {"id": "zl", "label": "zerolog"}}},
		{"id": "name", "question": "Package name?", "options": []map[string]any{{"id": "ab", "label": "ab"}, {"id": "askb", "label": "askbridge"}}}}}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	batch := func(calls ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i+1 < len(calls); i += 2 {
			out = append(out, map[string]any{"tool_call_id": calls[i], "tool": calls[i+1], "arguments": args("path", calls[i])})
		}
		return out
	}
	editedTo := must(t)(json.Marshal(map[string]string{"to": mk.Carried("an edited argument's value")}))
	editedBody := must(t)(json.Marshal(map[string]string{"path": "a", "body": mk.Carried("a batch call's edited argument")}))

	// rows are the table of kinds and features. A row asks with a tool
	// call on route's host (tool, args) or, for what no tool takes (an
	// editable call), through core as the same agent (ask); its steps close
	// it, the task read while open between them; state and by are how it
	// must end.
	rows := []struct {
		name, route, tool string
		args              map[string]any
		ask               *core.AskInput
		steps             []step
		state             core.State
		by                core.Closer
	}{
		{"clarification answered by a person", "", mcp.ToolClarification, clarify("Which region?"), nil,
			[]step{answer(anon, core.AnswerInput{Text: mk.Carried("a clarification's answer")})}, core.StateAnswered, core.CloserPerson},
		{"clarification answered in the host", "", mcp.ToolClarification, clarify("Which zone?"), nil,
			[]step{inHost(map[string]any{"answer": mk.Carried("a clarification's answer (the task's form)")})}, core.StateAnswered, core.CloserPerson},
		{"decision answered with a note by a configured person", "", mcp.ToolDecision, decision, nil,
			[]step{answer(pat, core.AnswerInput{OptionID: "nats", Text: mk.Carried("a decision's note")})}, core.StateAnswered, core.CloserPerson},
		{"decision answered in the host with a note", "", mcp.ToolDecision, decision, nil,
			[]step{inHost(map[string]any{"option": "sqs", "note": mk.Carried("a decision's note (the task's form)")})}, core.StateAnswered, core.CloserPerson},
		{"approval approved with a reason", "", mcp.ToolApproval, approval("deploy", args("env", "prod")), nil,
			[]step{answer(anon, core.AnswerInput{OptionID: core.ApproveOption, Text: mk.Carried("an approval's reason")})}, core.StateAnswered, core.CloserPerson},
		{"approval denied with a reason", "", mcp.ToolApproval, approval("drop_table", args("table", "users")), nil,
			[]step{answer(pat, core.AnswerInput{OptionID: core.DenyOption, Text: mk.Carried("a deny reason")})}, core.StateAnswered, core.CloserPerson},
		{"approval denied in the host with a reason", "", mcp.ToolApproval, approval("drop_table", args("table", "orders")), nil,
			[]step{inHost(map[string]any{"verdict": core.DenyOption, "reason": mk.Carried("a deny reason (the task's form)")})}, core.StateAnswered, core.CloserPerson},
		{"approval approved with edits", "", "", nil, &core.AskInput{Kind: core.KindApproval, Text: "May I move it?", Reversibility: core.HardToReverse,
			Tool: "mv", Arguments: json.RawMessage(`{"to":"x"}`), Editable: &core.Editable{Keys: []string{"to"}}},
			[]step{answer(quinn, core.AnswerInput{OptionID: core.ApproveOption, Arguments: editedTo, Text: mk.Carried("an edit's reason")})}, core.StateAnswered, core.CloserPerson},
		{"form answered in parts, with free text", "", mcp.ToolQuestions, form, nil, []step{
			answer(pat, core.AnswerInput{Items: []core.ItemInput{{ItemID: "logger", OptionID: "zl"}}}),
			answer(quinn, core.AnswerInput{Items: []core.ItemInput{{ItemID: "name", Text: mk.Carried("a form item's free text")}}}),
		}, core.StateAnswered, core.CloserParts},
		{"form answered in the host, with free text", "", mcp.ToolQuestions, form, nil,
			[]step{inHost(map[string]any{"q1": "slog", "q2_text": mk.Carried("a form item's free text (the task's form)")})}, core.StateAnswered, core.CloserParts},
		{"batch decided call by call, with reasons and edits", "", "", nil, &core.AskInput{Kind: core.KindApproval, Text: "Write these files?", Reversibility: core.Reversible,
			Calls: []core.CallInput{
				{ToolCallID: "call_a", Tool: "write_file", Arguments: json.RawMessage(`{"path":"a","body":"x"}`), Editable: &core.Editable{Keys: []string{"body"}}},
				{ToolCallID: "call_b", Tool: "write_file", Arguments: json.RawMessage(`{"path":"b"}`)},
				{ToolCallID: "call_c", Tool: "write_file", Arguments: json.RawMessage(`{"path":"c"}`)},
			}}, []step{
			answer(pat, core.AnswerInput{Calls: []core.CallDecision{
				{ToolCallID: "call_a", OptionID: core.ApproveOption, Reason: mk.Carried("a batch call's approve reason"), Arguments: editedBody},
				{ToolCallID: "call_b", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's deny reason")},
			}}),
			answer(anon, core.AnswerInput{OptionID: core.ApproveOption, Text: mk.Carried("a batch's reason for the rest")}),
		}, core.StateAnswered, core.CloserParts},
		{"quorum of two with notes", "quorum", mcp.ToolApproval, approval("rotate_keys", args("all", "yes")), nil, []step{
			answer(pat, core.AnswerInput{OptionID: core.ApproveOption, Text: mk.Carried("a vote's note")}),
			answer(quinn, core.AnswerInput{OptionID: core.ApproveOption, Text: mk.Carried("another vote's note")}),
		}, core.StateAnswered, core.CloserQuorum},
		{"decision settled by votes", "quorum", mcp.ToolDecision, decision, nil, []step{
			answer(quinn, core.AnswerInput{OptionID: "sqs", Text: mk.Carried("a decision vote's note")}),
			answer(anon, core.AnswerInput{OptionID: "sqs", Text: mk.Carried("another decision vote's note")}),
		}, core.StateAnswered, core.CloserQuorum},
		{"a vote with words, then a timeout", "quorum", mcp.ToolApproval, with(approval("rotate_keys", args("all", "no")), "timeout", "1h"), nil, []step{
			answer(pat, core.AnswerInput{OptionID: core.ApproveOption, Text: mk.Carried("a lone vote's note before a timeout")}), timeOut,
		}, core.StateTimedOut, core.CloserTimeout},
		{"a form's free text, then a timeout", "", mcp.ToolQuestions, with(form, "timeout", "1h"), nil, []step{
			answer(quinn, core.AnswerInput{Items: []core.ItemInput{{ItemID: "name", Text: mk.Carried("a form item's free text before a timeout")}}}), timeOut,
		}, core.StateTimedOut, core.CloserTimeout},
		{"a batch call decided, then cancelled by an operator", "", mcp.ToolApproval, map[string]any{"question": "These?", "reversibility": "reversible",
			"calls": batch("call_x", "write_file", "call_y", "write_file")}, nil, []step{
			answer(pat, core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: "call_x", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's reason before a cancel")}}}),
			func(t *testing.T, id core.QuestionID) {
				if _, err := svc.Cancel(ctx, core.CancelInput{QuestionID: id, By: anon, Reason: mk.Carried("an operator's cancel reason")}); err != nil {
					t.Fatal(err)
				}
			},
		}, core.StateCancelled, core.CloserOperatorCancel},
		{"approval denied by a policy rule", "policy", mcp.ToolApproval, approval("fetch", args("url", "https://example.com")), nil, nil, core.StateAnswered, core.CloserPolicy},
		{"approval allowed by a policy rule", "policy", mcp.ToolApproval, approval("read_file", args("path", "go.mod")), nil, nil, core.StateAnswered, core.CloserPolicy},
		{"batch with calls decided by policy rules", "policy", mcp.ToolApproval, map[string]any{"question": "These?", "reversibility": "reversible",
			"calls": batch("call_fetch", "fetch", "call_read", "read_file", "call_write", "write_file")}, nil,
			[]step{answer(quinn, core.AnswerInput{Calls: []core.CallDecision{{ToolCallID: "call_write", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's reason beside rule-decided calls")}}})},
			core.StateAnswered, core.CloserParts},
		{"approval that grants a standing approval", "", mcp.ToolApproval, with(approval("lint", args("fix", "yes")), "reversibility", "reversible", "run_id", "run-standing"), nil,
			[]step{answer(pat, core.AnswerInput{OptionID: core.ApproveOption, Text: mk.Carried("a standing grant's reason"), Standing: &core.StandingRequest{Scope: core.StandingRun}})},
			core.StateAnswered, core.CloserPerson},
		{"approval a standing approval covered", "", mcp.ToolApproval, with(approval("lint", args("fix", "yes")), "reversibility", "reversible", "run_id", "run-standing"), nil,
			nil, core.StateAnswered, core.CloserStanding},
		{"declined", "", mcp.ToolClarification, clarify("Tabs or spaces?"), nil, []step{func(t *testing.T, id core.QuestionID) {
			if _, err := svc.Decline(ctx, id, anon); err != nil {
				t.Fatal(err)
			}
		}}, core.StateDeclined, core.CloserDecline},
		{"expired with its run", "", mcp.ToolClarification, with(clarify("Before the run ends?"), "run_id", "run-ending"), nil, []step{func(t *testing.T, id core.QuestionID) {
			if _, err := svc.EndRun(ctx, core.Run{Agent: "alice", ID: "run-ending"}); err != nil {
				t.Fatal(err)
			}
		}}, core.StateExpired, core.CloserExpiry},
	}
	asked := map[core.Shape]bool{}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			h := hosts[row.route]
			if row.route == "" {
				h = host
			}
			var id core.QuestionID
			if row.ask != nil {
				in := *row.ask
				in.Agent, in.RunID, in.ToolCallID = "alice", "run-fence", fmt.Sprintf("toolu_%02d", i)
				q, err := svc.Ask(ctx, in)
				if err != nil {
					t.Fatalf("ask: %v", err)
				}
				id = q.ID
			} else {
				a := with(row.args, "tool_call_id", fmt.Sprintf("toolu_%02d", i))
				raw, err := h.callTool(ctx, row.tool, a)
				if err != nil {
					t.Fatalf("%s: %v", row.tool, err)
				}
				mk.CheckJSON(t, "the task "+row.tool+" returned", raw, fencetest.ApprovedArguments)
				id = core.QuestionID(asTask(t, raw).TaskID)
			}
			q, err := svc.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			asked[q.Shape()] = true
			var stream <-chan json.RawMessage
			if q.Open() {
				lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
				defer lcancel()
				if stream, err = h.listen(lctx, string(id)); err != nil {
					t.Fatal(err)
				}
			}
			for n, s := range row.steps {
				if n > 0 {
					readTask(t, ctx, mk, h, id, fmt.Sprintf("tasks/get after step %d", n))
				}
				s(t, id)
			}
			w := readTask(t, ctx, mk, h, id, "tasks/get once it ended")
			if q, err = svc.Get(ctx, id); err != nil || q.State != row.state || core.CloserOf(q) != row.by {
				t.Fatalf("the question: %s by %s, %v; want %s by %s", q.State, core.CloserOf(q), err, row.state, row.by)
			}
			if row.by == core.CloserAgentCancel {
				if w.Status != "cancelled" {
					t.Errorf("task %+v, want cancelled", w)
				}
			} else if p, err := fence.ParseResume(completed(t, w).Content[0].(*mcpsdk.TextContent).Text); err != nil || p.QuestionID != string(id) {
				t.Errorf("the task's result text: %+v, %v", p, err)
			}
			if stream != nil {
				notified := false
				for m := range stream {
					mk.CheckJSON(t, "the task's listen stream", m, fencetest.ApprovedArguments)
					notified = notified || strings.Contains(string(m), `"notifications/tasks"`)
				}
				if !notified {
					t.Errorf("the listen stream ended with no notifications/tasks for %s", id)
				}
			}
		})
	}
	for _, sh := range core.Shapes() {
		if !asked[sh] {
			t.Errorf("no row asks a %s: every kind of question proves here that its task is fenced", sh)
		}
	}
	mk.CheckCarried(t, "the task's host")
}

// readTask reads task id with tasks/get as c, checks every string of the
// raw result for markers, and returns it read.
func readTask(t *testing.T, ctx context.Context, mk *fencetest.Markers, c *taskClient, id core.QuestionID, where string) wireTask {
	t.Helper()
	raw, err := c.send(ctx, "tasks/get", string(id), map[string]any{"taskId": string(id)})
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	mk.CheckJSON(t, where, raw, fencetest.ApprovedArguments)
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("%s: %s: %v", where, raw, err)
	}
	return w
}
