package hooks

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// pinCounter is core's service, counting the door's Pin calls: the door
// pins a configuration only to ask, so a count above zero means the
// prompt went on to be asked.
type pinCounter struct {
	*core.Service
	pins atomic.Int32
}

func (c *pinCounter) Pin() *core.Pinned {
	c.pins.Add(1)
	return c.Service.Pin()
}

// TestHookEmptyQueryParameterIsRefused: each query parameter the door
// reads (route, wait), given with no value, is refused naming it, as the
// API refuses one, rather than read as left out: an empty ?route= was
// the default route and its policies, not the route the operator meant,
// and an empty ?wait= the longest wait. The refusal is what the door
// answers any prompt it cannot ask: Claude Code's PreToolUse an "ask",
// Codex's a deny, each with the reason and passing the host's pinned
// schema; a PermissionRequest the error, a failed hook, so the host
// shows its own prompt. Nothing is asked. Before, each was asked.
func TestHookEmptyQueryParameterIsRefused(t *testing.T) {
	svc := &pinCounter{Service: coretest.Service(t, coretest.OpenStore(t), coretest.Options{})}
	// MaxWait is short so that a door still reading an empty wait as the
	// longest answers (and fails this test) at once.
	mux := http.NewServeMux()
	mux.Handle("POST /v1/hooks/{host}", Handler(svc, Options{
		Agent:   func(*http.Request) core.AgentID { return "agent-a" },
		MaxWait: 20 * time.Millisecond,
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	post := func(t *testing.T, fx bashPrompt, query string) (int, []byte) {
		t.Helper()
		u := srv.URL + "/v1/hooks/" + string(fx.prompt.Host) + "?" + query
		resp, err := http.Post(u, "application/json", bytes.NewReader(fixture(t, fx.name)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// The control: a wait given is asked (the counter counts).
	if post(t, bashPrompts(t)[0], "wait=1ms"); svc.pins.Load() == 0 {
		t.Fatal("a prompt with ?wait=1ms was not asked")
	}
	for _, c := range []struct{ query, name string }{
		{"route=", "route"},
		{"route", "route"},
		{"route=&route=ops", "route"},
		{"wait=", "wait"},
		{"wait", "wait"},
		{"wait=1s&wait=", "wait"},
		{"route=ops&wait=", "wait"},
	} {
		for _, fx := range bashPrompts(t) {
			t.Run(c.query+"/"+fx.name, func(t *testing.T) {
				before := svc.pins.Load()
				status, b := post(t, fx, c.query)
				named := `query parameter "` + c.name + `" is empty`
				if fx.prompt.Event == PermissionRequest {
					var e struct {
						Error struct{ Code, Message string }
					}
					if err := json.Unmarshal(b, &e); err != nil || status != http.StatusBadRequest ||
						e.Error.Code != string(core.CodeInvalid) || !strings.Contains(e.Error.Message, named) {
						t.Fatalf("%d %s; want 400 invalid naming %q", status, b, named)
					}
				} else {
					want := "ask"
					if fx.prompt.Host == Codex {
						want = "deny"
					}
					validate(t, fx.schema, b)
					var got preToolUseOutputWire
					if err := json.Unmarshal(b, &got); err != nil {
						t.Fatal(err)
					}
					h := got.HookSpecificOutput
					if status != http.StatusOK || h.PermissionDecision != want || !strings.Contains(h.PermissionDecisionReason, named) {
						t.Fatalf("%d %s; want 200, %s, and a reason naming %q", status, b, want, named)
					}
				}
				if n := svc.pins.Load() - before; n != 0 {
					t.Fatalf("the prompt was asked (%d pins); want it refused before", n)
				}
			})
		}
	}
}
