package hooks_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// The same prompt asked again: while its question is open it shares it;
// once closed, it is asked anew down the prompt's chain (door.ask).

// TestHookPromptRunTwiceWhileOpenSharesItsQuestion: the same prompt sent
// twice while its question is open (the host ran the hook again) parks
// one question, and both runs hear its answer.
func TestHookPromptRunTwiceWhileOpenSharesItsQuestion(t *testing.T) {
	d := newDoor(t)
	body := hookFixture(t, "claude-code/permission-request.bash.json")
	first := d.start(t.Context(), "/v1/hooks/claude-code", body)
	second := d.start(t.Context(), "/v1/hooks/claude-code", body)
	if first.id == "" || second.id != first.id {
		t.Fatalf("two runs of one open prompt parked %s and %s; want one question", first.id, second.id)
	}
	if err := d.answer(first.id, core.AnswerInput{OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	a, b := first.body(t), second.body(t)
	if !strings.Contains(a, `"behavior":"allow"`) || b != a {
		t.Fatalf("the runs heard %s and %s; want the same allow", a, b)
	}
}

// TestHookSamePromptFromAnotherDirectoryIsAskedAnew: a prompt named by
// its digest (no tool_use_id) from another working directory, or on
// another route, is another prompt: once the first is approved, the same
// command from elsewhere parks a question of its own, open, instead of
// a conflict with the first one's body (whose project label and context
// name the first directory).
func TestHookSamePromptFromAnotherDirectoryIsAskedAnew(t *testing.T) {
	d := newDoorOn(t, map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
		"other":           {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
	})
	withCwd := func(cwd string) string {
		return hookInput(t, "claude-code/permission-request.bash.json", map[string]string{
			"cwd": strconv.Quote(cwd), "tool_input": `{"command":"npm test"}`,
		})
	}
	first := d.start(t.Context(), "/v1/hooks/claude-code", withCwd("/repo"))
	if err := d.answer(first.id, core.AnswerInput{OptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	if got := first.body(t); !strings.Contains(got, `"behavior":"allow"`) {
		t.Fatalf("body %s, want an allow", got)
	}
	seen := map[core.QuestionID]bool{first.id: true}
	for _, route := range []string{"", "other"} {
		for _, cwd := range []string{"/repo/packages/a", "/repo"} {
			if route == "" && cwd == "/repo" {
				continue // the first prompt itself
			}
			path := "/v1/hooks/claude-code?wait=1ms"
			if route != "" { // no route is the parameter left out: given empty it is refused
				path += "&route=" + route
			}
			status, id, b := d.send(t.Context(), path, withCwd(cwd))
			if status != http.StatusOK || id == "" || seen[id] {
				t.Fatalf("route %q from %s: status %d, question %q, body %s; want 200 and a question of its own", route, cwd, status, id, b)
			}
			seen[id] = true
			q, err := d.svc.Get(t.Context(), id)
			if err != nil || q.State != core.StateCancelled || core.CloserOf(q) != core.CloserBridgeCancel {
				t.Fatalf("route %q from %s: question %+v, %v; want it asked, then withdrawn when the wait ran out", route, cwd, q, err)
			}
		}
	}
}

// TestHookManyIdenticalPromptsInASession: a command a rule allows, asked
// by its digest (no tool_use_id) again and again in one long session,
// is allowed every time: past the 256th as at the first, each ask
// parking a question of its own without walking every earlier closed
// one.
func TestHookManyIdenticalPromptsInASession(t *testing.T) {
	st := &countingAsks{Store: coretest.OpenStore(t)}
	svc := coretest.Service(t, st, coretest.Options{Routes: map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		Rules:    []core.Rule{{Name: "tests", When: `tool == "Bash" && args.command == "npm test"`, Decide: core.DecideAllow}},
	}}})
	counted := &forgetting{Service: svc}
	d := &door{t: t, svc: svc, srv: mount(t, counted, context.Background())}
	body := hookInput(t, "claude-code/permission-request.bash.json", map[string]string{"tool_input": `{"command":"npm test"}`})
	seen := map[core.QuestionID]bool{}
	for i := range 300 {
		// Once, the record of the chain is lost (it expired, or could not
		// be read): that ask walks from the chain's first link, and still
		// comes to a question of its own.
		st.n.Store(0)
		counted.lost = i == 100
		status, id, b := d.send(t.Context(), "/v1/hooks/claude-code", body)
		if status != http.StatusOK || !strings.Contains(b, `"behavior":"allow"`) || seen[id] {
			t.Fatalf("prompt %d: status %d, question %q, body %s; want a new question, allowed by the rule", i+1, status, id, b)
		}
		seen[id] = true
		if want := map[bool]int32{true: int32(i) + 1, false: 2}[counted.lost]; st.n.Load() > want {
			t.Fatalf("prompt %d walked %d questions of its chain; want at most %d", i+1, st.n.Load(), want)
		}
	}
}

// countingAsks is a store that counts the door's asks: each stores its
// question, or finds it stored already (a repeat, refused as a
// duplicate), in one Create.
type countingAsks struct {
	core.Store
	n atomic.Int32
}

func (c *countingAsks) Create(ctx context.Context, q *core.Question, asked core.Event, out []core.Delivery) error {
	c.n.Add(1)
	return c.Store.Create(ctx, q, asked, out)
}

// forgetting is a core whose store values, once lost is set, forget
// everything.
type forgetting struct {
	*core.Service
	lost bool
}

func (c *forgetting) Values() core.Values {
	if c.lost {
		return forgetful{c.Service.Values()}
	}
	return c.Service.Values()
}

type forgetful struct{ core.Values }

func (forgetful) Value(context.Context, string) (string, error) { return "", nil }
