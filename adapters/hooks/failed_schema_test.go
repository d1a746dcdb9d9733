package hooks

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/askbridge/askbridge/core"
)

// TestEveryOtherAnswerMatchesTheHostsSchema: the answers the door and the
// command give besides Decide's (TestOutputs covers those) pass the
// host's pinned output schema: FailedAsk's, for every kind of failure,
// and the deny of a Codex PreToolUse whose question the agent withdrew.
// A Codex PreToolUse deny also carries a reason that is not blank:
// Codex reads a deny without one as an invalid hook and lets the call go
// on (testdata/SOURCES), so a blank reason would turn a deny into a run.
func TestEveryOtherAnswerMatchesTheHostsSchema(t *testing.T) {
	failures := []struct {
		name string
		err  error
	}{
		{"refused as invalid", core.Errorf(core.CodeInvalid, "ask", "arguments are 20000 bytes; the limit is 16384")},
		{"refused as a conflict", core.Errorf(core.CodeConflict, "ask", "question q1 was already asked with this tool call id")},
		{"forbidden", core.Errorf(core.CodeForbidden, "hook", "the token this prompt came with no longer holds")},
		{"internal", core.Internal("ask", errors.New("store down"))},
		{"unreached", &Unreached{Server: "http://127.0.0.1:8080", Err: errors.New("connection refused")}},
		{"refused by the server", &Unreached{Server: "http://127.0.0.1:8080", Refused: true, Err: errors.New("unauthorized (401)")}},
		{"usage", &Usage{Synopsis: "hook --host claude-code|codex", Err: errors.New("flag provided but not defined: -wiat")}},
	}
	withdrawn := closed(core.StateCancelled, &core.Resolution{State: core.StateCancelled, ClosedBy: core.CloserAgentCancel})
	for _, fx := range bashPrompts(t) {
		p, sc := fx.prompt, fx.schema
		check := func(t *testing.T, out []byte, wantDecision string) {
			t.Helper()
			validate(t, sc, out)
			var got preToolUseOutputWire
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			h := got.HookSpecificOutput
			if h.HookEventName != string(p.Event) || h.PermissionDecision != wantDecision || strings.TrimSpace(h.PermissionDecisionReason) == "" {
				t.Fatalf("answer %s; want %s for %s with a reason", out, wantDecision, p.Event)
			}
		}
		for _, f := range failures {
			t.Run(fx.name+"/"+f.name, func(t *testing.T) {
				out, ok := FailedAsk(p, f.err)
				code := core.ErrorCode(f.err)
				switch {
				case p.Event == PermissionRequest:
					if ok {
						t.Fatalf("a PermissionRequest was answered %s; want no answer (the host's own prompt)", out)
					}
				case p.Host == ClaudeCode:
					if !ok {
						t.Fatal("Claude Code's PreToolUse got no answer; want ask")
					}
					check(t, out, "ask")
				case code == core.CodeInvalid || code == core.CodeConflict:
					if !ok {
						t.Fatal("Codex's PreToolUse refused by askbridge got no answer; want deny")
					}
					check(t, out, "deny")
				default:
					if ok {
						t.Fatalf("Codex's PreToolUse was answered %s; want no answer (Codex's own policy)", out)
					}
				}
			})
		}
		t.Run(fx.name+"/withdrawn by the agent", func(t *testing.T) {
			out, err := Output(p, decide(p, withdrawn, false, nil))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case p.Host == Codex && p.Event == PreToolUse:
				check(t, out, "deny")
			case p.Event == PreToolUse:
				check(t, out, "ask")
			case out != nil:
				t.Fatalf("a PermissionRequest was answered %s; want no answer", out)
			}
		})
	}
}

// bashPrompt is a Bash prompt of one host and event, parsed, with its
// host's pinned output schema.
type bashPrompt struct {
	name   string // the fixture's
	prompt Prompt
	schema *jsonschema.Schema
}

// bashPrompts are the Bash prompt of each host and event, for the tests
// of answers that do not depend on the prompt's details.
func bashPrompts(t *testing.T) []bashPrompt {
	t.Helper()
	var out []bashPrompt
	for _, fx := range []struct {
		host         Host
		file, schema string
	}{
		{ClaudeCode, "claude-code/permission-request.bash.json", "claude-code/permission-request.output.schema.json"},
		{ClaudeCode, "claude-code/pre-tool-use.bash.json", "claude-code/pre-tool-use.output.schema.json"},
		{Codex, "codex/permission-request.bash.json", "codex/permission-request.command.output.schema.json"},
		{Codex, "codex/pre-tool-use.bash.json", "codex/pre-tool-use.command.output.schema.json"},
	} {
		p, err := Parse(fx.host, fixture(t, fx.file))
		if err != nil {
			t.Fatalf("%s: %v", fx.file, err)
		}
		out = append(out, bashPrompt{name: fx.file, prompt: p, schema: schema(t, fx.schema)})
	}
	return out
}
