package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// mrtrEnv is askbridge behind two replicas and a 2026-07-28 host of the
// SDK that takes forms: the SDK's client fulfils an input_required result
// through its elicitation handler and retries the call, each round
// through whichever replica the balancer picks.
type mrtrEnv struct {
	ctx   context.Context
	svc   *core.Service
	cs    *mcpsdk.ClientSession
	b     *balancer
	asked <-chan elicitation
}

func newMRTREnv(t *testing.T) *mrtrEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	svc := newService(t)
	r := newReplicas(t, svc, 2, mcp.Options{WaitSlice: 20 * time.Millisecond, Caller: agentOf})
	copts, asked := elicitor(t)
	b := &balancer{r: r, token: "tok-alice"}
	cs := b.connect(t, ctx, copts, current)
	return &mrtrEnv{ctx: ctx, svc: svc, cs: cs, b: b, asked: asked}
}

func (e *mrtrEnv) decide(args map[string]any) <-chan callResult {
	return callOn(e.ctx, e.cs, &mcpsdk.CallToolParams{Name: mcp.ToolDecision, Arguments: args})
}

var queueArgs = map[string]any{"question": "Which queue?", "reversibility": "reversible", "options": []map[string]any{
	{"id": "sqs", "title": "SQS", "writeup": "Managed.", "recommended": true}, {"id": "nats", "title": "NATS", "writeup": "Ours to run."}}}

// TestInputRequiredHostAnswers: the call returns the question as a form
// (no request of the server's own: 2026-07-28 has none), the host's
// reply comes back with the retried call, is recorded at the chokepoint
// as {mcp, alice}, and the retry returns the resume.
func TestInputRequiredHostAnswers(t *testing.T) {
	e := newMRTREnv(t)
	out := e.decide(queueArgs)
	first := nextElicitation(t, e.ctx, e.asked)
	if !strings.Contains(first.req.Params.Message, "Which queue?") || first.req.Params.Mode != "form" {
		t.Fatalf("the host was asked %+v", first.req.Params)
	}
	first.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"option": "nats", "note": "we run it"}}
	res := result(t, e.ctx, out)
	st := structured(t, res)
	q, err := e.svc.Get(e.ctx, st.QuestionID)
	if err != nil {
		t.Fatal(err)
	}
	if q.State != core.StateAnswered || q.Resolution.Decider.Surface != core.SurfaceMCP || q.Resolution.Decider.ID != "alice" || st.ChosenOptionID != "nats" {
		t.Fatalf("after the host's reply: %s by %+v, chose %q", q.State, q.Resolution.Decider, st.ChosenOptionID)
	}
	resumed(t, res, q.ID, fence.VerbAnswered)
	calls := 0
	for _, ex := range e.b.exchanges() {
		if ex.method == "tools/call" {
			calls++
		}
		if ex.session != "" {
			t.Errorf("%s carried a session", ex.method)
		}
	}
	if calls != 2 {
		t.Errorf("%d tools/call requests, want 2 (the ask, the answer)", calls)
	}
	if qs, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(qs) != 0 {
		t.Errorf("the retries parked %d more questions", len(qs))
	}
}

// TestInputRequiredChatFirst: chat answers while the form is open; the
// host's reply then loses at the chokepoint and the retried call returns
// the question as chat closed it.
func TestInputRequiredChatFirst(t *testing.T) {
	e := newMRTREnv(t)
	out := e.decide(queueArgs)
	asked := nextElicitation(t, e.ctx, e.asked)
	q := waitParked(t, e.ctx, e.svc)
	if _, err := e.svc.Answer(e.ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, OptionID: "sqs"}); err != nil {
		t.Fatal(err)
	}
	asked.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"option": "nats"}}
	p, st := resumed(t, result(t, e.ctx, out), q.ID, fence.VerbAnswered)
	if st.ChosenOptionID != "sqs" {
		t.Errorf("chosen %q, want chat's sqs", st.ChosenOptionID)
	}
	if name, _ := region(p, fence.TagDeciderName); name != operator.Name {
		t.Errorf("the resume names %q, want the operator", name)
	}
}

// TestInputRequiredDeclineWaitsForChat: a host that declines the form
// leaves the question to chat, and the retried call waits for it.
func TestInputRequiredDeclineWaitsForChat(t *testing.T) {
	e := newMRTREnv(t)
	out := e.decide(queueArgs)
	nextElicitation(t, e.ctx, e.asked).reply <- &mcpsdk.ElicitResult{Action: "decline"}
	q := waitParked(t, e.ctx, e.svc)
	select {
	case r := <-out:
		t.Fatalf("the call returned before anyone answered: %+v, %v", r.res, r.err)
	default:
	}
	if _, err := e.svc.Answer(e.ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, OptionID: "sqs"}); err != nil {
		t.Fatal(err)
	}
	if _, st := resumed(t, result(t, e.ctx, out), q.ID, fence.VerbAnswered); st.ChosenOptionID != "sqs" {
		t.Errorf("chosen %q", st.ChosenOptionID)
	}
}

// TestInputRequiredStateIsChecked: a retry whose request state names
// another agent's question, or a question of another kind, is refused
// and changes nothing.
func TestInputRequiredStateIsChecked(t *testing.T) {
	e := newMRTREnv(t)
	theirs, err := e.svc.Ask(e.ctx, core.AskInput{Agent: "mallory", RunID: "r", Kind: core.KindDecision, Text: "Theirs?",
		Reversibility: core.Reversible, Options: []core.Option{{ID: "a", Title: "A", Writeup: "a", Recommended: true}, {ID: "b", Title: "B", Writeup: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := e.svc.Ask(e.ctx, core.AskInput{Agent: "alice", RunID: "r", Kind: core.KindClarification, Text: "Mine?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []core.QuestionID{theirs.ID, mine.ID} {
		res, err := e.cs.CallTool(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolDecision, Arguments: queueArgs, RequestState: string(id),
			InputResponses: mcpsdk.InputResponseMap{"askbridge-host-answer": &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"option": "a"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Errorf("a retry naming %s was served: %+v", id, res)
		}
	}
	for _, id := range []core.QuestionID{theirs.ID, mine.ID} {
		if q, _ := e.svc.Get(e.ctx, id); !q.Open() {
			t.Errorf("question %s is %s", id, q.State)
		}
	}
}

// TestInputRequiredRefusedReplyIsAskedAgain: a reply the chokepoint
// refuses (an option the question does not have, which the SDK's own
// client would not send) is asked again, saying why, and changes nothing.
// The form asked again is a new request, under a key and a request state
// of its own, and the reply to it counts.
func TestInputRequiredRefusedReplyIsAskedAgain(t *testing.T) {
	e := newMRTREnv(t)
	host := &taskClient{t: t, http: &http.Client{Transport: e.b}, url: e.b.r.urls[0].String(),
		caps: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}
	raw, err := host.callTool(e.ctx, mcp.ToolDecision, queueArgs)
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		ResultType    string                      `json:"resultType"`
		RequestState  string                      `json:"requestState"`
		InputRequests map[string]wireInputRequest `json:"inputRequests"`
	}
	if err := json.Unmarshal(raw, &first); err != nil || first.ResultType != "input_required" || first.RequestState == "" {
		t.Fatalf("first round: %s (%v)", raw, err)
	}
	firstKey := onlyRequest(t, first.InputRequests).key
	raw, err = retryWith(e.ctx, host, mcp.ToolDecision, queueArgs, first.RequestState, firstKey,
		map[string]any{"action": "accept", "content": map[string]any{"option": "kafka"}})
	if err != nil {
		t.Fatal(err)
	}
	var again struct {
		ResultType    string                      `json:"resultType"`
		RequestState  string                      `json:"requestState"`
		InputRequests map[string]wireInputRequest `json:"inputRequests"`
	}
	// The request state and the key were the same round after round
	// before: the form asked again reused the key its refused reply had
	// answered.
	if err := json.Unmarshal(raw, &again); err != nil || again.ResultType != "input_required" || again.RequestState == first.RequestState ||
		len(again.InputRequests) != 1 || again.InputRequests[firstKey].Method != "" {
		t.Fatalf("a refused reply: %s (%v); want a new request state and key", raw, err)
	}
	againKey := onlyRequest(t, again.InputRequests).key
	if !strings.Contains(again.InputRequests[againKey].Params.Message, "Your answer was not recorded") {
		t.Fatalf("a refused reply is asked again without saying why: %s", raw)
	}
	if q, _ := e.svc.Get(e.ctx, core.QuestionID(first.RequestState)); q == nil || !q.Open() {
		t.Fatalf("a refused reply changed the question: %+v", q)
	}
	res := toolResultOf(t, must(t)(retryWith(e.ctx, host, mcp.ToolDecision, queueArgs, again.RequestState, againKey,
		map[string]any{"action": "accept", "content": map[string]any{"option": "nats"}})))
	if st := structured(t, res); st.State != core.StateAnswered || st.ChosenOptionID != "nats" {
		t.Fatalf("the reply to the form asked again: %+v", st)
	}
}
