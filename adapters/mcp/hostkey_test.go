package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// threeItems is an ask_questions call of three items.
var threeItems = map[string]any{"reversibility": "reversible", "questions": []map[string]any{
	{"id": "lang", "question": "Language?", "options": []map[string]any{{"id": "go", "label": "Go"}, {"id": "rs", "label": "Rust"}}},
	{"id": "db", "question": "Database?", "options": []map[string]any{{"id": "pg", "label": "Postgres"}, {"id": "my", "label": "MySQL"}}},
	{"id": "ci", "question": "CI?", "options": []map[string]any{{"id": "gh", "label": "GitHub"}, {"id": "gl", "label": "GitLab"}}},
}}

// formRequest is the one input request of a result or task: its key and
// the fields its form asks.
type formRequest struct {
	key    string
	fields []string
}

func onlyRequest(t *testing.T, reqs map[string]wireInputRequest) formRequest {
	t.Helper()
	if len(reqs) != 1 {
		t.Fatalf("%d input requests, want one: %+v", len(reqs), reqs)
	}
	for k, r := range reqs {
		props, _ := r.Params.RequestedSchema["properties"].(map[string]any)
		f := formRequest{key: k}
		for name := range props {
			if !strings.HasSuffix(name, "_text") {
				f.fields = append(f.fields, name)
			}
		}
		return f
	}
	panic("unreachable")
}

func (f formRequest) asks(fields ...string) bool {
	if len(f.fields) != len(fields) {
		return false
	}
	for _, want := range fields {
		found := false
		for _, got := range f.fields {
			found = found || got == want
		}
		if !found {
			return false
		}
	}
	return true
}

// itemAnswer is who answered item id of q, and with what, or "".
func itemAnswer(q *core.Question, id string) string {
	a, ok := q.Answered(id)
	if !ok {
		return ""
	}
	return string(a.Decider.Surface) + ":" + a.OptionID
}

// TestTaskFormKeyFollowsTheForm: a task's host form has a key of its
// own for each thing it asks, as the Tasks extension requires (a key
// names one request over the task's life, and is not used again once
// answered). After the host answers part of a form, and after chat
// answers an item, the form that asks what is left has a new key; a
// reply to a key superseded is ignored and acknowledged, as the
// extension says, and records nothing; the current key's reply counts.
func TestTaskFormKeyFollowsTheForm(t *testing.T) {
	e := newTaskEnv(t)
	h := e.host("tok-alice", tasksCaps(true))
	w := asTask(t, must(t)(h.callTool(e.ctx, mcp.ToolQuestions, threeItems)))
	id := core.QuestionID(w.TaskID)
	current := func() formRequest {
		t.Helper()
		got, err := h.get(e.ctx, w.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		return onlyRequest(t, got.InputRequests)
	}
	update := func(key string, content map[string]any) {
		t.Helper()
		if err := h.update(e.ctx, w.TaskID, map[string]any{key: map[string]any{"action": "accept", "content": content}}); err != nil {
			t.Fatalf("a reply under %s: %v", key, err)
		}
	}
	read := func() *core.Question {
		t.Helper()
		q, err := e.svc.Get(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}

	k1 := current()
	update(k1.key, map[string]any{"q1": "rs"}) // the host answers part of it
	k2 := current()
	if k2.key == k1.key || !k2.asks("q2", "q3") {
		t.Fatalf("after the host's part answer: %+v, first %+v; want a new key asking q2 and q3", k2, k1)
	}
	e.answer(core.AnswerInput{QuestionID: id, Items: []core.ItemInput{{ItemID: "db", OptionID: "pg"}}})
	k3 := current()
	if k3.key == k2.key || k3.key == k1.key || !k3.asks("q3") {
		t.Fatalf("after chat answered an item: %+v; want a new key asking q3", k3)
	}
	update(k2.key, map[string]any{"q2": "my", "q3": "gl"}) // the form before chat answered
	update(k1.key, map[string]any{"q3": "gl"})
	if q := read(); !q.Open() || itemAnswer(q, "db") != "api:pg" || itemAnswer(q, "ci") != "" {
		t.Fatalf("replies to superseded keys changed the question: %s, db %q, ci %q", q.State, itemAnswer(q, "db"), itemAnswer(q, "ci"))
	}
	update(k3.key, map[string]any{"q3": "gh"})
	if q := read(); q.State != core.StateAnswered || itemAnswer(q, "lang") != "mcp:rs" || itemAnswer(q, "ci") != "mcp:gh" {
		t.Fatalf("after the current form's reply: %s, lang %q, ci %q", q.State, itemAnswer(q, "lang"), itemAnswer(q, "ci"))
	}
}

// inputRequiredResult is a 2026-07-28 input_required result.
type inputRequiredResult struct {
	ResultType    string                      `json:"resultType"`
	RequestState  string                      `json:"requestState"`
	InputRequests map[string]wireInputRequest `json:"inputRequests"`
}

func asInputRequired(t *testing.T, raw json.RawMessage) inputRequiredResult {
	t.Helper()
	var r inputRequiredResult
	if err := json.Unmarshal(raw, &r); err != nil || r.ResultType != "input_required" || r.RequestState == "" {
		t.Fatalf("got %s, want input_required (%v)", raw, err)
	}
	return r
}

// formHost is a 2026-07-28 host that takes forms, without Tasks.
func formHost(t *testing.T, b *balancer) *taskClient {
	return &taskClient{t: t, http: &http.Client{Transport: b}, url: b.r.urls[0].String(),
		caps: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}
}

// retryWith sends the host's retry of a call: its reply under key.
func retryWith(ctx context.Context, h *taskClient, tool string, args map[string]any, state, key string, reply map[string]any) (json.RawMessage, error) {
	return h.send(ctx, "tools/call", tool, map[string]any{"name": tool, "arguments": args, "requestState": state,
		"inputResponses": map[string]any{key: reply}})
}

// TestInputRequiredStaleFormIsAskedAgain: on 2026-07-28 without tasks,
// the host's reply to a form that chat changed meanwhile (it answered an
// item) answers a request superseded: the retry records none of it and
// puts what is left to the host under a new key; the reply to that
// counts.
func TestInputRequiredStaleFormIsAskedAgain(t *testing.T) {
	e := newMRTREnv(t)
	host := formHost(t, e.b)
	args := map[string]any{"reversibility": "reversible", "questions": threeItems["questions"].([]map[string]any)[:2]}
	first := asInputRequired(t, must(t)(host.callTool(e.ctx, mcp.ToolQuestions, args)))
	k1 := onlyRequest(t, first.InputRequests)
	q := waitParked(t, e.ctx, e.svc)
	if _, err := e.svc.Answer(e.ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Items: []core.ItemInput{{ItemID: "lang", OptionID: "go"}}}); err != nil {
		t.Fatal(err)
	}
	accept := func(content map[string]any) map[string]any {
		return map[string]any{"action": "accept", "content": content}
	}
	again := asInputRequired(t, must(t)(retryWith(e.ctx, host, mcp.ToolQuestions, args, first.RequestState, k1.key, accept(map[string]any{"q1": "rs", "q2": "pg"}))))
	k2 := onlyRequest(t, again.InputRequests)
	if k2.key == k1.key || !k2.asks("q2") {
		t.Fatalf("after chat answered an item: %+v, first %+v; want a new key asking q2", k2, k1)
	}
	if got, _ := e.svc.Get(e.ctx, q.ID); !got.Open() || itemAnswer(got, "db") != "" {
		t.Fatalf("the reply to the superseded form was recorded: %s, db %q", got.State, itemAnswer(got, "db"))
	}
	res := toolResultOf(t, must(t)(retryWith(e.ctx, host, mcp.ToolQuestions, args, again.RequestState, k2.key, accept(map[string]any{"q2": "my"}))))
	if st := structured(t, res); st.State != core.StateAnswered {
		t.Fatalf("after the current form's reply: %+v", st)
	}
	if got, _ := e.svc.Get(e.ctx, q.ID); itemAnswer(got, "lang") != "api:go" || itemAnswer(got, "db") != "mcp:my" {
		t.Errorf("answers lang %q, db %q", itemAnswer(got, "lang"), itemAnswer(got, "db"))
	}
}

// offRoute is the bridge after a reload took the agent's host off the
// question's route: from then on the host may not answer, and core
// refuses what it sends.
type offRoute struct {
	mcp.ServiceBackend
	off     atomic.Bool
	refused chan struct{}
}

func (b *offRoute) HostMayAnswer(ctx context.Context, id core.QuestionID) (bool, error) {
	if b.off.Load() {
		return false, nil
	}
	return b.ServiceBackend.HostMayAnswer(ctx, id)
}

func (b *offRoute) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	if b.off.Load() {
		b.refused <- struct{}{}
		return core.Errorf(core.CodeForbidden, "answer", "you may not answer this question here")
	}
	return b.ServiceBackend.AnswerInHost(ctx, in)
}

// TestInputRequiredOffRouteWaitsForChat: a host reply refused because
// the host may no longer answer (a reload dropped mcp from the route) is
// not met with the form again, round after round: the retry waits for
// the other surfaces, like a plain call, and returns chat's answer.
func TestInputRequiredOffRouteWaitsForChat(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	b := &offRoute{ServiceBackend: mcp.ServiceBackend{Svc: svc}, refused: make(chan struct{}, 1)}
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(b, mcp.Options{WaitSlice: 20 * time.Millisecond, Caller: agentOf})))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	host := formHost(t, &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"})
	first := asInputRequired(t, must(t)(host.callTool(ctx, mcp.ToolDecision, queueArgs)))
	b.off.Store(true)
	out := make(chan json.RawMessage, 1)
	go func() {
		raw, err := retryWith(ctx, host, mcp.ToolDecision, queueArgs, first.RequestState, onlyRequest(t, first.InputRequests).key,
			map[string]any{"action": "accept", "content": map[string]any{"option": "nats"}})
		if err != nil {
			t.Error(err)
		}
		out <- raw
	}()
	select {
	case <-b.refused:
	case <-ctx.Done():
		t.Fatal("the host's reply was never tried")
	}
	q := waitParked(t, ctx, svc)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, OptionID: "sqs"}); err != nil {
		t.Fatal(err)
	}
	if st := structured(t, toolResultOf(t, <-out)); st.State != core.StateAnswered || st.ChosenOptionID != "sqs" {
		t.Fatalf("the retry returned %+v, want chat's answer", st)
	}
}
