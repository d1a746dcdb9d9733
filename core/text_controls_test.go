package core_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// textField is one text field an agent supplies: its name as a refusal
// names it, the ask to put text in, and whether it takes several lines.
type textField struct {
	name      string
	kind      core.Kind
	set       func(in *core.AskInput, s string)
	multiline bool
}

var agentTextFields = []textField{
	{"question", core.KindClarification, func(in *core.AskInput, s string) { in.Text = s }, true},
	{"context", core.KindClarification, func(in *core.AskInput, s string) { in.Context = s }, true},
	{"labels.project", core.KindClarification, func(in *core.AskInput, s string) { in.Labels.Project = s }, false},
	{"labels.task", core.KindClarification, func(in *core.AskInput, s string) { in.Labels.Task = s }, false},
	{"agent", core.KindClarification, func(in *core.AskInput, s string) { in.Agent = core.AgentID(s) }, false},
	{"run_id", core.KindClarification, func(in *core.AskInput, s string) { in.RunID = core.RunID(s) }, false},
	{"tool_call_id", core.KindClarification, func(in *core.AskInput, s string) { in.ToolCallID = s }, false},
	{"Idempotency-Key", core.KindClarification, func(in *core.AskInput, s string) { in.IdempotencyKey = s }, false},
	{"options[1].id", core.KindDecision, func(in *core.AskInput, s string) { in.Options[1].ID = s }, false},
	{"options[1].title", core.KindDecision, func(in *core.AskInput, s string) { in.Options[1].Title = s }, false},
	{"options[1].writeup", core.KindDecision, func(in *core.AskInput, s string) { in.Options[1].Writeup = s }, true},
	{"items[0].id", core.KindForm, func(in *core.AskInput, s string) { in.Items[0].ID = s }, false},
	{"items[0].question", core.KindForm, func(in *core.AskInput, s string) { in.Items[0].Question = s }, true},
	{"items[0].options[1].id", core.KindForm, func(in *core.AskInput, s string) { in.Items[0].Options[1].ID = s }, false},
	{"items[0].options[1].label", core.KindForm, func(in *core.AskInput, s string) { in.Items[0].Options[1].Label = s }, false},
	{"items[0].options[1].description", core.KindForm, func(in *core.AskInput, s string) { in.Items[0].Options[1].Description = s }, true},
	{"calls[1].tool_call_id", core.KindApproval, func(in *core.AskInput, s string) { in.Calls[1].ToolCallID = s }, false},
	{"editable[0]", core.KindApproval, func(in *core.AskInput, s string) { in.Calls[0].Editable = &core.Editable{Keys: []string{s}} }, false},
}

// askOf is a valid ask of kind, fresh each time (its slices are its own).
func askOf(kind core.Kind) core.AskInput {
	in := core.AskInput{Kind: kind, Agent: "a", RunID: "r", Text: "Which?", Reversibility: core.Reversible}
	switch kind {
	case core.KindDecision:
		in.Options = []core.Option{{ID: "a", Title: "A", Writeup: "fast", Recommended: true}, {ID: "b", Title: "B", Writeup: "safe"}}
	case core.KindForm:
		in.Items = []core.FormItem{{ID: "i", Question: "Which?", Options: []core.FormOption{{ID: "x", Label: "X"}, {ID: "y", Label: "Y"}}}}
	case core.KindApproval:
		in.Calls = []core.CallInput{{ToolCallID: "c1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`)},
			{ToolCallID: "c2", Tool: "Read", Arguments: json.RawMessage(`{}`)}}
	}
	return in
}

// TestControlCharactersInAgentTextAreRefused: a C0 or C1 control (tab and
// line breaks aside) or a bidi embedding, override or isolate, in any text
// field an agent supplies, is refused with an error naming the field.
// Before, ESC, BEL and U+202E were taken, and `askbridge questions`
// printed the ESC: an agent could erase or overwrite rows in an
// operator's terminal.
func TestControlCharactersInAgentTextAreRefused(t *testing.T) {
	bad := []rune{0x00, 0x07, 0x08, 0x1b, 0x7f, 0x85, 0x9b, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069}
	for _, f := range agentTextFields {
		for _, r := range bad {
			in := askOf(f.kind)
			f.set(&in, "ok"+string(r)+"ok")
			err := in.Validate()
			if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), f.name+" ") ||
				!strings.Contains(core.ErrorMessage(err), fmt.Sprintf("U+%04X", r)) {
				t.Errorf("%s with U+%04X: %v; want it refused, naming the field and the character", f.name, r, err)
			}
		}
		in := askOf(f.kind)
		f.set(&in, "a\rb")
		if err := in.Validate(); (err == nil) != f.multiline {
			t.Errorf("%s with a carriage return: %v; want it taken only in multi-line text", f.name, err)
		}
	}
	svc, _ := coretest.Open(t, coretest.Options{})
	in := askOf(core.KindClarification)
	in.Text = "Deploy?\x1b[1A\x1b[2K"
	if _, err := svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("ask with ESC: %v, want it refused", err)
	}
	if open, _, err := svc.ListOpen(t.Context(), "", 10); err != nil || len(open) != 0 {
		t.Errorf("a refused ask parked %d questions, %v", len(open), err)
	}
}

// TestLegitimateTextIsTaken: emoji (joined with U+200D too), right-to-left
// scripts with their marks, tabs and line breaks all stay taken.
func TestLegitimateTextIsTaken(t *testing.T) {
	texts := []string{"Ship it? \U0001F680", "\U0001F469\u200d\U0001F4BB \U0001F44D\U0001F3FD", "\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",
		"abc \u200f\u05d0\u200e def", "tab\there", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "caf\u00e9 \u00a0 \u2014"}
	for _, f := range agentTextFields {
		for _, s := range texts {
			in := askOf(f.kind)
			f.set(&in, s)
			if err := in.Validate(); err != nil {
				t.Errorf("%s = %q: %v, want it taken", f.name, s, err)
			}
		}
		if f.multiline {
			in := askOf(f.kind)
			f.set(&in, "line one\nline two\r\n\tthree")
			if err := in.Validate(); err != nil {
				t.Errorf("%s with line breaks: %v, want it taken", f.name, err)
			}
		}
	}
}

// TestARefusedCarriageReturnIsToldTheTruth: a one-line field refuses a
// carriage return, and its refusal says which line break it takes (the
// line feed), not that line breaks are taken. Before, a title holding
// "\r" was told "only tab and line breaks are taken".
func TestARefusedCarriageReturnIsToldTheTruth(t *testing.T) {
	for _, f := range agentTextFields {
		if f.multiline {
			continue
		}
		in := askOf(f.kind)
		f.set(&in, "a\rb")
		if msg := core.ErrorMessage(in.Validate()); !strings.Contains(msg, "U+000D") || strings.Contains(msg, "line breaks are taken") || !strings.Contains(msg, "line feed") {
			t.Errorf("%s with a carriage return: %q; want it refused, naming the line feed as the one line break taken", f.name, msg)
		}
	}
}
