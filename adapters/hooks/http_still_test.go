package hooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestHookAnswersNothingToARemovedToken: a prompt whose token a reload
// removed while it waited gets no decision from the answer that came
// after (Options.Still): a Claude Code PreToolUse is asked at the
// keyboard, as a prompt whose token is refused at the door is; before,
// the removed token's host was handed the person's allow.
func TestHookAnswersNothingToARemovedToken(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{})
	var removed atomic.Bool
	mux := http.NewServeMux()
	mux.Handle("POST /v1/hooks/{host}", hooks.Handler(svc, hooks.Options{
		Agent: func(*http.Request) core.AgentID { return agent }, MaxWait: time.Minute, Stop: context.Background(),
		Still: func(*http.Request) func(context.Context) bool {
			return func(context.Context) bool { return !removed.Load() }
		},
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	d := &door{t: t, svc: svc, srv: srv}
	call := d.start(t.Context(), "/v1/hooks/claude-code", hookFixture(t, "claude-code/pre-tool-use.bash.json"))
	removed.Store(true)
	if err := d.answer(call.id, core.AnswerInput{OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	if got := call.body(t); strings.Contains(got, `"allow"`) || !strings.Contains(got, `"permissionDecision":"ask"`) {
		t.Fatalf("the removed token's host was told %s; want it asked at the keyboard", got)
	}
}
