package hooks

import "testing"

// TestMainThreadDigestsAreKept: a prompt from a session's main thread
// (no agent_id) is known by the digest it had before subagents were told
// apart, so a question open across an upgrade is still found by the
// host's next run of the hook. The digests below are what the release
// before subagents made of these prompts; the same prompt from a
// subagent digests otherwise.
func TestMainThreadDigestsAreKept(t *testing.T) {
	for _, c := range []struct {
		p     Prompt
		route string
		want  string
	}{
		{Prompt{Host: ClaudeCode, Event: PermissionRequest, SessionID: "s1", Tool: "Bash", Cwd: "/repo",
			Input: []byte(`{"command":"rm -rf build","description":"Clean"}`)}, "", "hook-bb6af7d2ecb7fbdc1b06dc2b2730e9a14776a805"},
		{Prompt{Host: ClaudeCode, Event: PermissionRequest, SessionID: "s1", Tool: "Bash", Cwd: "/repo",
			Input: []byte(`{"command":"rm -rf build","description":"Clean"}`)}, "ops", "hook-324d9761c79e4a5827351cc7901fc29aa65d42f5"},
		{Prompt{Host: Codex, Event: PreToolUse, SessionID: "s2", TurnID: "t7", Tool: "Bash", Cwd: "/work",
			Input: []byte(`{"command":"ls"}`)}, "", "hook-ccf939cab5dd374fe7ac12a74f81eac11b3e3585"},
		{Prompt{Host: Codex, Event: PreToolUse, SessionID: "s2", TurnID: "t7", Tool: "Bash", Cwd: "/work",
			Input: []byte(`{"command":"ls"}`)}, "ops", "hook-099d4f55192908ed828cd8da41b6ba0ad8d8bf4b"},
	} {
		got, err := c.p.ToolCallID(c.route)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %s on route %q digests to %s, want %s as before", c.p.Host, c.p.Event, c.route, got, c.want)
		}
		sub := c.p
		sub.SubagentID, sub.SubagentType = "agent-1", "worker"
		if id, err := sub.ToolCallID(c.route); err != nil || id == c.want {
			t.Errorf("%s %s from a subagent digests to %s, %v: the main thread's", c.p.Host, c.p.Event, id, err)
		}
	}
}
