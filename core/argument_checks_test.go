package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// denyFetch is a bridge whose default route denies every WebFetch call,
// on the tool alone, and lets people edit nothing else.
func denyFetch(t *testing.T) *core.Service {
	t.Helper()
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.Rules = []core.Rule{{When: `tool == "WebFetch"`, Decide: core.DecideDeny, Reason: "No network."}}
	routes[core.DefaultRoute] = r
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes})
	return svc
}

func approvalOf(tool, args string) core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?",
		Reversibility: core.Reversible, Tool: tool, Arguments: json.RawMessage(args)}
}

// refusedAsk checks that in is refused as invalid with a message holding
// each of want, and that nothing was parked.
func refusedAsk(t *testing.T, svc *core.Service, in core.AskInput, want ...string) {
	t.Helper()
	_, err := svc.Ask(t.Context(), in)
	if core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("%s %s: %v, want it refused as invalid", in.Tool, in.Arguments, err)
		return
	}
	for _, w := range want {
		if !strings.Contains(core.ErrorMessage(err), w) {
			t.Errorf("%s %s: %q, want it to say %q", in.Tool, in.Arguments, core.ErrorMessage(err), w)
		}
	}
	if open, _, err := svc.ListOpen(t.Context(), "", 10); err != nil || len(open) != 0 {
		t.Errorf("a refused ask parked %d questions, %v", len(open), err)
	}
}

// TestNumbersTheRulesCannotReadAreRefused: a number beyond a float64 is
// refused at the ask, alone or in a batch's call. Before, the ask was
// taken, the rules failed to read its arguments and stopped, and a deny
// keyed on the tool alone never ran: the call went to a person.
func TestNumbersTheRulesCannotReadAreRefused(t *testing.T) {
	svc := denyFetch(t)
	for _, args := range []string{`{"url":"https://x","n":1e400}`, `{"a":[1,{"n":-1e309}]}`, `{"n":` + strings.Repeat("9", 400) + `}`} {
		refusedAsk(t, svc, approvalOf("WebFetch", args), "arguments", "out of range")
	}
	refusedAsk(t, svc, approvalOf("WebFetch", `{"n":1e400}`), "/n", "1e400")
	batch := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?", Reversibility: core.Reversible,
		Calls: []core.CallInput{{ToolCallID: "c1", Tool: "Read", Arguments: json.RawMessage(`{}`)},
			{ToolCallID: "c2", Tool: "WebFetch", Arguments: json.RawMessage(`{"n":1e400}`)}}}
	refusedAsk(t, svc, batch, "calls[1].arguments", "1e400")
}

// TestADenyOnTheToolDecidesEveryAskTaken: whatever arguments the ask
// takes, a deny keyed on the tool alone decides it; no argument the
// validation lets through can make the rules stop before it. Before,
// 1e400 and a stray bracket after the object were taken, and the rules
// (which read the arguments again, as float64) stopped on them.
func TestADenyOnTheToolDecidesEveryAskTaken(t *testing.T) {
	svc := denyFetch(t)
	for i, args := range []string{`{"url":"https://x"}`, `{"n":1e308}`, `{"n":-1e-400}`, `{"n":-0}`,
		`{"n":123456789012345678901234567890}`, ` {"s":"\u00e9\ud83d\ude00\ufffd"} `, `{"a":[[[[{"b":null}]]]],"t":true}`,
		`{"":""}`, `{"n":1e400}`, `{"url":"https://x"}]`, "{\"emoji\":\"\U0001F469\u200d\U0001F4BB\"}"} {
		in := approvalOf("WebFetch", args)
		in.ToolCallID = "c" + string(rune('a'+i))
		q, err := svc.Ask(t.Context(), in)
		if err != nil {
			continue // refused: no rule needed
		}
		if q.State != core.StateAnswered || q.Resolution.ClosedBy != core.CloserPolicy {
			t.Errorf("%s: taken and left %s, closed by %v; want the deny rule to decide it", args, q.State, q.Resolution)
		}
	}
}

// TestLoneSurrogatesAreRefused: a \u escape of half a surrogate pair is
// refused. Before, the arguments were taken with U+FFFD in its place, so
// "\ud800", "\udfff" and "\ufffd" stored one value and one SHA-256: an
// approval's hash matched calls that differ from what was shown.
func TestLoneSurrogatesAreRefused(t *testing.T) {
	for _, args := range []string{`{"path":"/tmp/a\ud800"}`, `{"path":"/tmp/a\udfff"}`, `{"p":"\ud83d"}`, `{"p":"\ude00\ud83d"}`, `{"\udc00":1}`} {
		if _, _, err := core.HashArguments(json.RawMessage(args)); core.ErrorCode(err) != core.CodeInvalid ||
			!strings.Contains(core.ErrorMessage(err), "surrogate") {
			t.Errorf("HashArguments(%s): %v, want a refusal naming the surrogate", args, err)
		}
	}
	for _, args := range []string{`{"path":"/tmp/a\ufffd"}`, `{"p":"\ud83d\ude00"}`} {
		if _, _, err := core.HashArguments(json.RawMessage(args)); err != nil {
			t.Errorf("HashArguments(%s): %v, want it taken", args, err)
		}
	}
	svc, _ := coretest.Open(t, coretest.Options{})
	refusedAsk(t, svc, approvalOf("delete_files", `{"path":"/tmp/a\ud800"}`), "arguments", "surrogate")
}

// TestTrailingInputIsRefused: anything after the arguments' JSON value is
// refused. Before, "{}]" read as {}: the decoder stops before a closing
// bracket and reports no more values.
func TestTrailingInputIsRefused(t *testing.T) {
	for _, args := range []string{`{}]`, `{"a":1}}`, `{} x`, `{}{}`, `{} {}`, `{},`} {
		if c, err := core.CanonicalArguments(json.RawMessage(args)); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("CanonicalArguments(%s) = %s, %v; want it refused", args, c, err)
		}
	}
	if c, err := core.CanonicalArguments(json.RawMessage(" {\"b\":1,\"a\":2}\n")); err != nil || string(c) != `{"a":2,"b":1}` {
		t.Errorf("whitespace around the value: %s, %v", c, err)
	}
}

// TestAnApprovalsArgumentsAreAnObject: a call's arguments are a JSON
// object, alone or in a batch, as on the MCP and hook doors. Before, the
// API and the CLI took [1,2], "str", null and 5.
func TestAnApprovalsArgumentsAreAnObject(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	for _, args := range []string{`[1,2]`, `"str"`, `null`, `5`, `true`, ` []`} {
		refusedAsk(t, svc, approvalOf("shell", args), "arguments must be a JSON object")
		batch := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?", Reversibility: core.Reversible,
			Calls: []core.CallInput{{ToolCallID: "c1", Tool: "Read", Arguments: json.RawMessage(`{}`)},
				{ToolCallID: "c2", Tool: "shell", Arguments: json.RawMessage(args)}}}
		refusedAsk(t, svc, batch, "calls[1].arguments must be a JSON object")
	}
}

// TestBadEditedArgumentsChangeNothing: edited arguments (typed in chat or
// the console) that hold a stray closing bracket, half a surrogate pair,
// a number beyond a float64 or something other than an object are
// refused, on a single call and on a batch's, and the question stays
// open, unchanged.
func TestBadEditedArgumentsChangeNothing(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	ctx := t.Context()
	in := approvalOf("write_file", `{"path":"/a"}`)
	in.Editable = &core.Editable{All: true}
	q, err := svc.Ask(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	batchIn := core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r2", Text: "Run?", Reversibility: core.Reversible,
		Calls: []core.CallInput{{ToolCallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`), Editable: &core.Editable{All: true}},
			{ToolCallID: "c2", Tool: "Read", Arguments: json.RawMessage(`{}`)}}}
	b, err := svc.Ask(ctx, batchIn)
	if err != nil {
		t.Fatal(err)
	}
	before := map[core.QuestionID]int64{}
	for _, id := range []core.QuestionID{q.ID, b.ID} {
		got, err := svc.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = got.Version
	}
	ops := core.Decider{Surface: core.SurfaceAPI, ID: "ops"}
	for _, edited := range []string{`{"path":"/b"}]`, `{"path":"/b"}}`, `{"path":"/a\ud800"}`, `{"path":"/b","n":1e400}`, `["/b"]`} {
		_, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: ops, OptionID: core.ApproveOption, Arguments: json.RawMessage(edited)})
		if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "edited arguments") {
			t.Errorf("edit %s: %v, want it refused, naming the edited arguments", edited, err)
		}
		_, err = svc.Answer(ctx, core.AnswerInput{QuestionID: b.ID, Decider: ops,
			Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.ApproveOption, Arguments: json.RawMessage(edited)}}})
		if core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("batch edit %s: %v, want it refused", edited, err)
		}
	}
	for _, id := range []core.QuestionID{q.ID, b.ID} {
		got, err := svc.Get(ctx, id)
		if err != nil || got.State != core.StateOpen || got.Version != before[id] || len(got.Answers) != 0 {
			t.Errorf("%s after refused edits: %+v, %v; want it open and unchanged", id, got, err)
		}
	}
}

// TestABatchEditSaysWhyItIsRefused: edited arguments for a batch's call
// are refused with the reason, as a single call's are: the stray text
// after the value, the half surrogate pair, the number out of range, the
// array that is no object. Before, a batch's call said only "not valid
// JSON", and a person typing in chat was left guessing.
func TestABatchEditSaysWhyItIsRefused(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	ctx := t.Context()
	b, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?", Reversibility: core.Reversible,
		Calls: []core.CallInput{{ToolCallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`), Editable: &core.Editable{All: true}},
			{ToolCallID: "c2", Tool: "Read", Arguments: json.RawMessage(`{}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	ops := core.Decider{Surface: core.SurfaceAPI, ID: "ops"}
	for edited, why := range map[string]string{
		`{"path":"/b"}]`:          "text follows the value",
		`{"path":"/a\ud800"}`:     "surrogate",
		`{"path":"/b","n":1e400}`: "out of range",
		`["/b"]`:                  "must be a JSON object",
	} {
		_, err := svc.Answer(ctx, core.AnswerInput{QuestionID: b.ID, Decider: ops,
			Calls: []core.CallDecision{{ToolCallID: "c1", OptionID: core.ApproveOption, Arguments: json.RawMessage(edited)}}})
		if msg := core.ErrorMessage(err); core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(msg, "edited arguments") || !strings.Contains(msg, why) {
			t.Errorf("batch edit %s: %v; want it refused, saying %q", edited, err, why)
		}
	}
}
