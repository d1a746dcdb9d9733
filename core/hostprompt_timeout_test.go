package core_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestHostPromptTimeout: a host's own permission prompt's timeout is its
// hook's wait, not the asker's word (AskInput.HostPrompt), where an
// agent's ask is held to its word. An ask rule's timeout replaces an
// agent's, but not a host prompt's shorter one: its hook stops waiting
// then, so a rule's two hours put a deadline on its cards that nobody
// waited for (a rule's shorter timeout still wins). A timeout over the
// max refuses an agent's ask, and cuts a host prompt's to the max. And a
// host prompt asked again while its question is open, through a hook
// that waits otherwise (another hook, a reload), finds that question,
// where an agent's repeat with another timeout is a conflict; before,
// the host's was a conflict too, and the host fell back to its own
// prompt.
func TestHostPromptTimeout(t *testing.T) {
	const h, m = time.Hour, time.Minute
	for _, c := range []struct {
		name string
		// rule is an ask rule's timeout (0: no rule), max the
		// configuration's (0: the default), mine the asker's.
		rule, max, mine time.Duration
		host            bool
		want            time.Duration // 0: the ask is refused as invalid
	}{
		{"an agent's ask takes the rule's", 2 * h, 0, 5 * m, false, 2 * h},
		{"a host prompt keeps its shorter wait", 2 * h, 0, 5 * m, true, 5 * m},
		{"a host prompt takes a shorter rule's", m, 0, 5 * m, true, m},
		{"a host prompt with no timeout of its own takes the rule's", 2 * h, 0, 0, true, 2 * h},
		{"an agent's ask over the max is refused", 0, 30 * time.Second, m, false, 0},
		{"a host prompt over the max is cut to it", 0, 30 * time.Second, m, true, 30 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rules []core.Rule
			if c.rule != 0 {
				rules = append(rules, core.Rule{When: `tool == "bash"`, Decide: core.DecideAsk, Timeout: c.rule})
			}
			cfg := ruledConfig(rules...)
			cfg.MaxTimeout = c.max
			svc, err := core.New(coretest.OpenStore(t), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run?", ToolCallID: "toolu_01",
				Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`), Reversibility: core.Reversible,
				Timeout: c.mine, HostPrompt: c.host}
			q, err := svc.Ask(t.Context(), in)
			if c.want == 0 {
				if core.ErrorCode(err) != core.CodeInvalid {
					t.Fatalf("the ask: %v; want it refused as invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Duration(q.Timeout) != c.want {
				t.Fatalf("timeout %s, want %s", q.Timeout, c.want)
			}
			in.Timeout += m // the same ask, through a hook that waits otherwise
			again, err := svc.Ask(t.Context(), in)
			switch {
			case c.host && (err != nil || again.ID != q.ID):
				t.Fatalf("the repeat: %v, %v; want question %s back", again, err, q.ID)
			case !c.host && core.ErrorCode(err) != core.CodeConflict:
				t.Fatalf("an agent's repeat with another timeout: %v; want a conflict", err)
			}
		})
	}
}
