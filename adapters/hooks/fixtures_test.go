package hooks

import (
	"encoding/json"
	"strings"
	"testing"
)

// The Codex fixtures are the host's format: they pass its published input
// schemas. The subagent's passes it once its agent_id and agent_type are
// taken out, the two optional strings Codex added after the schemas
// pinned (testdata/SOURCES); that they are strings is checked here.
func TestCodexFixturesMatchTheirSchema(t *testing.T) {
	for fx, sc := range map[string]string{
		"codex/permission-request.bash.json":     "codex/permission-request.command.input.schema.json",
		"codex/permission-request.network.json":  "codex/permission-request.command.input.schema.json",
		"codex/permission-request.subagent.json": "codex/permission-request.command.input.schema.json",
		"codex/pre-tool-use.bash.json":           "codex/pre-tool-use.command.input.schema.json",
		"codex/pre-tool-use.mcp.json":            "codex/pre-tool-use.command.input.schema.json",
		"codex/pre-tool-use.mcp-unparsed.json":   "codex/pre-tool-use.command.input.schema.json",
	} {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(fixture(t, fx), &fields); err != nil {
			t.Fatalf("%s: %v", fx, err)
		}
		for _, k := range []string{"agent_id", "agent_type"} {
			if raw, ok := fields[k]; ok {
				var s string
				if err := json.Unmarshal(raw, &s); err != nil || s == "" {
					t.Fatalf("%s: %s is %s; want a string", fx, k, raw)
				}
				delete(fields, k)
			}
		}
		b, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		validate(t, schema(t, sc), b)
	}
}

// TestSubagentFixtures: the pinned subagent prompts (testdata/SOURCES)
// read as the subagent's, and a subagent's prompt is known apart from
// the same prompt of another subagent, or of the main thread.
func TestSubagentFixtures(t *testing.T) {
	for _, c := range []struct {
		host        Host
		file        string
		id, subtype string
	}{
		{ClaudeCode, "claude-code/permission-request.subagent.json", "agent-42", "researcher"},
		{Codex, "codex/permission-request.subagent.json", "0199a214-07d2-7f31-9c4e-5d2b8e0a6c17", "worker"},
	} {
		p, err := Parse(c.host, fixture(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if p.SubagentID != c.id || p.SubagentType != c.subtype {
			t.Fatalf("%s: subagent %q of type %q; want %q of type %q", c.file, p.SubagentID, p.SubagentType, c.id, c.subtype)
		}
		in, err := p.Ask("claude", "")
		if err != nil || in.Validate() != nil {
			t.Fatalf("%s: %v %v", c.file, err, in.Validate())
		}
		if in.Agent != "claude" || !strings.Contains(in.Context, "Subagent: "+c.subtype+" ("+c.id+")") {
			t.Fatalf("%s: asked as %q with context %q", c.file, in.Agent, in.Context)
		}
		ids := map[string]string{}
		for _, sub := range []string{c.id, "agent-43", ""} {
			q := p
			q.SubagentID = sub
			id, err := q.ToolCallID("")
			if err != nil {
				t.Fatal(err)
			}
			if other, ok := ids[id]; ok {
				t.Fatalf("%s: the prompts of subagents %q and %q share the tool call id %s", c.file, other, sub, id)
			}
			ids[id] = sub
		}
	}
}
