package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// TestTaskListensOnOneQuestionAreBounded: past 256 listen streams
// following one question's task on a server (the bound of the calls
// waiting on one question, by default), or Options.MaxWaitsPerQuestion,
// a listen naming that task is not agreed it: the acknowledgement leaves
// it out, as it leaves out a task that is not the host's, so the host
// polls tasks/get for it, and the stream follows the other tasks it
// named; a listen left nothing to follow is answered at once. A stream
// that ends frees its place, and the close reaches every stream that
// follows the task. Before, nothing bounded them: one host could hold a
// connection and a goroutine per stream on one question for as long as a
// person took.
func TestTaskListensOnOneQuestionAreBounded(t *testing.T) {
	t.Run("default", func(t *testing.T) { boundedListens(t, 0, 256) })
	t.Run("set", func(t *testing.T) { boundedListens(t, 2, 2) })
}

// boundedListens fills the listeners of one task's question on one
// server with Options.MaxWaitsPerQuestion set, and checks that most is
// the bound.
func boundedListens(t *testing.T, set, most int) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(q string) string {
		return asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": q, "reversibility": "reversible"}))).TaskID
	}
	crowded, other := ask("A?"), ask("B?")
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: e.svc},
		mcp.Options{Caller: agentOf, WaitSlice: time.Hour, MaxWaitsPerQuestion: set})))
	t.Cleanup(hs.Close) // after the streams' own cleanup ends them
	u, _ := url.Parse(hs.URL)
	c := &taskClient{t: t, http: &http.Client{Transport: &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"}}, url: hs.URL, caps: tasksCaps(false)}
	next := func(s <-chan json.RawMessage, what string) json.RawMessage {
		t.Helper()
		select {
		case m, ok := <-s:
			if !ok {
				t.Fatalf("the stream ended before %s", what)
			}
			return m
		case <-e.ctx.Done():
			t.Fatalf("no %s on the stream", what)
			return nil
		}
	}
	agreed := func(s <-chan json.RawMessage) []string {
		t.Helper()
		var ack struct {
			Method string `json:"method"`
			Params struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
			} `json:"params"`
		}
		if m := next(s, "the acknowledgement"); json.Unmarshal(m, &ack) != nil || ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("the stream began with %s, want its acknowledgement", m)
		}
		return ack.Params.Notifications.TaskIDs
	}
	listen := func(ids ...string) (<-chan json.RawMessage, context.CancelFunc) {
		t.Helper()
		ctx, cancel := context.WithCancel(e.ctx)
		t.Cleanup(cancel)
		s, err := c.listen(ctx, ids...)
		if err != nil {
			t.Fatal(err)
		}
		return s, cancel
	}

	var following []<-chan json.RawMessage
	var endFirst context.CancelFunc
	for i := range most {
		s, cancel := listen(crowded)
		if got := agreed(s); !slices.Equal(got, []string{crowded}) {
			t.Fatalf("listen %d of %d agreed %q, want the task", i+1, most, got)
		}
		if i == 0 {
			endFirst = cancel
		} else {
			following = append(following, s)
		}
	}

	// Past the bound the task is left out; the other task is followed.
	both, _ := listen(crowded, other)
	if got := agreed(both); !slices.Equal(got, []string{other}) {
		t.Fatalf("a listen past the bound agreed %q, want only %s", got, other)
	}
	alone, _ := listen(crowded)
	if got := agreed(alone); len(got) != 0 {
		t.Fatalf("a listen past the bound agreed %q, want nothing", got)
	}
	var res struct {
		Result struct {
			ResultType string `json:"resultType"`
		} `json:"result"`
	}
	if m := next(alone, "the listen's response"); json.Unmarshal(m, &res) != nil || res.Result.ResultType != "complete" {
		t.Fatalf("a listen left nothing to follow sent %s, want its response", m)
	}

	// A stream that ends frees its place (once the server has seen it
	// end, which it learns when the connection closes).
	endFirst()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(10 * time.Second); ; <-tick.C {
		s, cancel := listen(crowded)
		if got := agreed(s); len(got) == 1 {
			following = append(following, s)
			break
		}
		cancel()
		if time.Now().After(deadline) {
			t.Fatal("the place of a stream that ended was never freed")
		}
	}

	// The close reaches every stream that follows the task.
	e.answer(core.AnswerInput{QuestionID: core.QuestionID(crowded), Text: "eu"})
	for i, s := range following {
		var n struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if m := next(s, "the task's end"); json.Unmarshal(m, &n) != nil || n.Method != "notifications/tasks" || n.Params.TaskID != crowded {
			t.Fatalf("stream %d sent %s, want the task's end", i, m)
		}
	}
}
