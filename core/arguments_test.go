package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestArgumentsWithAKeyTwiceAreRefused: arguments that give a key twice,
// or hold text that is not UTF-8, are refused at the ask, on every door;
// before, core kept the last of two keys (what the card, the digest and
// the rules saw) while a tool keeping the first would run the other.
func TestArgumentsWithAKeyTwiceAreRefused(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	for _, args := range []string{`{"command":"rm -rf ~","command":"ls"}`, `{"a":{"b":1,"b":2}}`, "{\"path\":\"\xff\"}"} {
		_, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(args)})
		if core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%q: %v, want invalid", args, err)
		}
	}
	if open, _, err := svc.ListOpen(t.Context(), "", 10); err != nil || len(open) != 0 {
		t.Errorf("refused asks parked %d questions, %v", len(open), err)
	}
}

// TestToolNamesWithInvisibleCharactersAreRefused: a tool name holding a
// character that renders as nothing is refused at the ask, alone or in a
// batch; before, "Ba\u200bsh" showed on a card as Bash.
func TestToolNamesWithInvisibleCharactersAreRefused(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	ins := []core.AskInput{
		{Kind: core.KindApproval, Tool: "Ba\u200bsh", Arguments: json.RawMessage(`{}`)},
		{Kind: core.KindApproval, Calls: []core.CallInput{
			{ToolCallID: "c1", Tool: "Read", Arguments: json.RawMessage(`{}`)},
			{ToolCallID: "c2", Tool: "Bash\u202e", Arguments: json.RawMessage(`{}`)}}},
	}
	for _, in := range ins {
		in.Agent, in.RunID, in.Text, in.Reversibility = "a", "r", "Run?", core.Reversible
		if _, err := svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "render as nothing") {
			t.Errorf("%+v: %v, want it refused", in, err)
		}
	}
}

// TestAnEditAsTheCardShowsItFits: arguments within the limit, edited in
// the indented form every card's edit box is filled with, are taken: the
// limit counts the arguments, not the spaces the card put around them.
// Before, an edit of arguments of some 7 KiB whose indented copy passed
// 16 KiB was refused, even unchanged.
func TestAnEditAsTheCardShowsItFits(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	var b strings.Builder
	b.WriteString(`{"note":"first","edits":[`)
	for i := range 700 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"k":"v"}`)
	}
	b.WriteString(`]}`)
	args := json.RawMessage(b.String())
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Apply these edits?",
		Reversibility: core.Reversible, Tool: "MultiEdit", Arguments: args, Editable: &core.Editable{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	shown := core.PrettyJSON(args)
	if len(args) > core.MaxArgumentsLen || len(shown) <= core.MaxArgumentsLen {
		t.Fatalf("the test's arguments: %d bytes, %d indented; want them within the limit and their indented copy past it", len(args), len(shown))
	}
	edited := strings.Replace(shown, `"first"`, `"second"`, 1)
	o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"},
		OptionID: core.ApproveOption, Arguments: json.RawMessage(edited)})
	if err != nil || !o.Closed || o.Question.Resolution.Edit == nil {
		t.Fatalf("the edit as the card shows it: %+v, %v; want it approved with the edit", o.Question, err)
	}
}

// TestAnEditOfManyShortValuesAsTheCardShowsItFits: arguments at the
// limit made of many short values indent to more than four times their
// size; edited as the card shows them they are read without the layout
// and taken. Before, 16 KiB of numbers, sent back unchanged from the
// console's editor, were refused as 72 KiB.
func TestAnEditOfManyShortValuesAsTheCardShowsItFits(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	args := json.RawMessage(`{"note":"first","a":{"b":[` + strings.TrimSuffix(strings.Repeat("0,", 7990), ",") + `]}}`)
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Apply?",
		Reversibility: core.Reversible, Tool: "apply", Arguments: args, Editable: &core.Editable{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	shown := core.PrettyJSON(args)
	if len(shown) <= 4*core.MaxArgumentsLen {
		t.Fatalf("the test's arguments indent to %d bytes; want past four times the limit", len(shown))
	}
	edited := strings.Replace(shown, `"first"`, `"second"`, 1)
	o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"},
		OptionID: core.ApproveOption, Arguments: json.RawMessage(edited)})
	if err != nil || !o.Closed || o.Question.Resolution.Edit == nil {
		t.Fatalf("the edit as the card shows it: %+v, %v; want it approved with the edit", o.Question, err)
	}
}

// TestDeeplyNestedArgumentsAreRefused: arguments nesting past
// core.MaxArgumentsDepth are refused at the ask, since indented for a
// card they grow with the square of their depth (16 KiB of brackets
// made a 256 MB console page); and arguments stored before the limit
// are shown unindented, in size like their own.
func TestDeeplyNestedArgumentsAreRefused(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	nested := func(n int) json.RawMessage {
		return json.RawMessage(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	ask := func(args json.RawMessage) error {
		_, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: args})
		return err
	}
	if err := ask(nested(core.MaxArgumentsDepth)); err != nil {
		t.Fatalf("arguments %d deep: %v", core.MaxArgumentsDepth, err)
	}
	err := ask(nested(core.MaxArgumentsDepth + 1))
	if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "nest 65 levels deep") {
		t.Errorf("arguments %d deep: %v, want them refused for their depth", core.MaxArgumentsDepth+1, err)
	}
	if err := ask(json.RawMessage(`{"s":"[[[[ \" {{{{"}`)); err != nil {
		t.Errorf("brackets inside a string counted as nesting: %v", err)
	}
	deep := nested(8000)
	if shown := core.PrettyJSON(deep); len(shown) > 2*len(deep) {
		t.Errorf("arguments 8,000 deep shown in %d bytes from %d", len(shown), len(deep))
	}
}
