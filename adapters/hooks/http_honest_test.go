package hooks_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestHookQuestionDeadlineIsTheWait: a hook's question is due when the
// door stops waiting for it (?wait=, or the door's most), since the door
// withdraws it then and the host falls back to its own prompt; due five
// seconds after, so that the door's withdrawal comes first. Before,
// it took the configured default timeout (24 hours): every card said
// "answer by" a day later for a question withdrawn within minutes, and
// one whose withdrawal failed stayed answerable long after its host had
// gone, its card recording an answer nobody received (law 8).
func TestHookQuestionDeadlineIsTheWait(t *testing.T) {
	d := newDoor(t) // its door waits a minute at most
	for i, c := range []struct {
		query string
		want  time.Duration
	}{
		{"?wait=45s", 50 * time.Second},
		{"", time.Minute + 5*time.Second},
		{"?wait=2h", time.Minute + 5*time.Second},
	} {
		t.Run(c.query, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			body := hookInput(t, "claude-code/permission-request.bash.json", map[string]string{"session_id": strconv.Quote("deadline-" + strconv.Itoa(i))})
			call := d.start(ctx, "/v1/hooks/claude-code"+c.query, body)
			defer d.withdrawn(call, cancel)
			q, err := d.svc.Get(t.Context(), call.id)
			if err != nil {
				t.Fatal(err)
			}
			if time.Duration(q.Timeout) != c.want || q.Deadline.Sub(q.CreatedAt) != c.want {
				t.Fatalf("timeout %s, due %s after it was asked; want both %s, just after the door's wait", time.Duration(q.Timeout), q.Deadline.Sub(q.CreatedAt), c.want)
			}
		})
	}
}

// TestHookAskedWhereTheMaxTimeoutIsUnderTheWait: a configuration whose
// max timeout is shorter than the door's wait still has its prompts
// asked, due at the max, rather than refused for a timeout the host,
// not the agent, chose.
func TestHookAskedWhereTheMaxTimeoutIsUnderTheWait(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), core.Config{Routes: coretest.APIRoutes(), ActorKey: []byte(coretest.ActorKey),
		DefaultTimeout: 20 * time.Second, MaxTimeout: 30 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &door{t: t, svc: svc, srv: mount(t, svc, t.Context())} // waits a minute
	ctx, cancel := context.WithCancel(t.Context())
	call := d.start(ctx, "/v1/hooks/claude-code", hookFixture(t, "claude-code/permission-request.bash.json"))
	defer d.withdrawn(call, cancel)
	q, err := svc.Get(t.Context(), call.id)
	if err != nil || time.Duration(q.Timeout) != 30*time.Second {
		t.Fatalf("question %+v, %v; want it due at the max timeout, 30s", q, err)
	}
}

// TestHookCodexPreToolUseDeniedWhenTheAgentWithdrawsIt: a Codex
// PreToolUse prompt whose question the agent withdraws while it waits
// (its token, which the model's shell holds, cancels it over the API,
// MCP or the CLI) is denied: Codex reads no decision as leaving the call
// to its own approval policy, which may run it unasked, so the cancel
// would get the call past the person about to decide it, as ending the
// run would. Before, it answered nothing. The door's own withdrawal at
// the end of its wait still answers nothing; Claude Code's PreToolUse
// still gets "ask" and a PermissionRequest nothing: their host asks at
// the keyboard.
func TestHookCodexPreToolUseDeniedWhenTheAgentWithdrawsIt(t *testing.T) {
	d := newDoor(t)
	self := core.Decider{Surface: core.SurfaceAgent, ID: agent, Name: agent}
	d.closedMidWait(t, "withdrawn-", `"permissionDecision":"deny","permissionDecisionReason":"The agent withdrew the askbridge question about this call before anyone decided it, so it is not run."`,
		func(t *testing.T, c call, _ string) {
			if _, err := d.svc.Cancel(t.Context(), core.CancelInput{QuestionID: c.id, By: self, Owner: agent, Reason: "never mind"}); err != nil {
				t.Fatal(err)
			}
		})
	t.Run("the door's own withdrawal", func(t *testing.T) {
		body := hookInput(t, "codex/pre-tool-use.bash.json", map[string]string{"session_id": `"withdrawn-by-the-door"`})
		if got := d.start(t.Context(), "/v1/hooks/codex?wait=1ms", body).body(t); got != "" {
			t.Fatalf("body %s after the door's wait ran out; want none (Codex's own policy decides)", got)
		}
	})
}
