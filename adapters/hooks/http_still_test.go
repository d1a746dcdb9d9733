package hooks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/internal/coretest"
)

// newDoorRemovable is the hook door whose Options.Still reports the
// caller's token removed once removed is set.
func newDoorRemovable(t *testing.T) (*door, *atomic.Bool) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{})
	removed := new(atomic.Bool)
	mux := http.NewServeMux()
	mux.Handle("POST /v1/hooks/{host}", hooks.Handler(svc, hooks.Options{
		Agent: func(*http.Request) core.AgentID { return agent }, MaxWait: time.Minute, Stop: context.Background(),
		Still: func(*http.Request) func(context.Context) bool {
			return func(context.Context) bool { return !removed.Load() }
		},
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &door{t: t, svc: svc, srv: srv}, removed
}

// TestHookAnswersNothingToARemovedToken: a prompt whose token a reload
// removed while it waited gets no decision from the answer that came
// after (Options.Still): a Claude Code PreToolUse is asked at the
// keyboard, as a prompt whose token is refused at the door is; before,
// the removed token's host was handed the person's allow.
func TestHookAnswersNothingToARemovedToken(t *testing.T) {
	d, removed := newDoorRemovable(t)
	call := d.start(t.Context(), "/v1/hooks/claude-code", hookFixture(t, "claude-code/pre-tool-use.bash.json"))
	removed.Store(true)
	if err := d.answer(call.id, core.AnswerInput{OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	if got := call.body(t); strings.Contains(got, `"allow"`) || !strings.Contains(got, `"permissionDecision":"ask"`) {
		t.Fatalf("the removed token's host was told %s; want it asked at the keyboard", got)
	}
}

// TestHookPassesADenyToARemovedToken: a person's deny still reaches the
// host of a prompt whose token a reload removed while it waited, with
// its reason fenced as usual; only an allow is withheld. Before, the
// deny became no decision, which Codex's PreToolUse reads as leaving
// the call to its own approval policy: the call the person denied could
// run.
func TestHookPassesADenyToARemovedToken(t *testing.T) {
	const reason = "not on the production database"
	for _, c := range []struct {
		name, host, fixture string
		option              string
		// message reads the deny's message from the output; "" wants an
		// output with no decision in it.
		message func(out []byte) string
	}{
		{"codex PreToolUse deny", "codex", "codex/pre-tool-use.bash.json", core.DenyOption, preToolUseDeny},
		{"codex PermissionRequest deny", "codex", "codex/permission-request.bash.json", core.DenyOption, permissionDeny},
		{"claude-code PreToolUse deny", "claude-code", "claude-code/pre-tool-use.bash.json", core.DenyOption, preToolUseDeny},
		{"claude-code PermissionRequest deny", "claude-code", "claude-code/permission-request.bash.json", core.DenyOption, permissionDeny},
		{"codex PermissionRequest approve", "codex", "codex/permission-request.bash.json", core.ApproveOption, nil},
		{"claude-code PermissionRequest approve", "claude-code", "claude-code/permission-request.bash.json", core.ApproveOption, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, removed := newDoorRemovable(t)
			call := d.start(t.Context(), "/v1/hooks/"+c.host, hookFixture(t, c.fixture))
			removed.Store(true)
			if err := d.answer(call.id, core.AnswerInput{OptionID: c.option, Text: reason}); err != nil {
				t.Fatal(err)
			}
			got := call.body(t)
			if c.message == nil {
				if got != "" {
					t.Fatalf("the removed token's host was told %s; want nothing (its own prompt)", got)
				}
				return
			}
			msg := c.message([]byte(got))
			if msg == "" {
				t.Fatalf("a person denied the call; the removed token's host was told %q, no deny", got)
			}
			if want := "A person denied this tool call in askbridge. Their reason follows.\n" + fence.Wrap(fence.TagReason, reason).Explained(); msg != want {
				t.Fatalf("the deny says %q; want %q (the reason fenced, as usual)", msg, want)
			}
		})
	}
}

// preToolUseDeny is the reason of a PreToolUse deny in out, or "".
func preToolUseDeny(out []byte) string {
	var w struct {
		HookSpecificOutput struct {
			PermissionDecision, PermissionDecisionReason string
		}
	}
	if json.Unmarshal(out, &w) != nil || w.HookSpecificOutput.PermissionDecision != "deny" {
		return ""
	}
	return w.HookSpecificOutput.PermissionDecisionReason
}

// permissionDeny is the message of a PermissionRequest deny in out, or "".
func permissionDeny(out []byte) string {
	var w struct {
		HookSpecificOutput struct {
			Decision struct{ Behavior, Message string }
		}
	}
	if json.Unmarshal(out, &w) != nil || w.HookSpecificOutput.Decision.Behavior != "deny" {
		return ""
	}
	return w.HookSpecificOutput.Decision.Message
}
