package mcp_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// revocable is an Options.Still whose every check says the token holds
// until revoked is set, as a reload that removed it would.
func revocable(revoked *atomic.Bool) func(*http.Request) func(context.Context) bool {
	return func(*http.Request) func(context.Context) bool {
		return func(context.Context) bool { return !revoked.Load() }
	}
}

// stillServer serves the tools over HTTP for agentOf's callers, with
// wait slices of slice and Options.Still saying revoked.
func stillServer(t *testing.T, svc *core.Service, slice time.Duration, revoked *atomic.Bool) *httptest.Server {
	t.Helper()
	h := mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{WaitSlice: slice, Caller: agentOf, Still: revocable(revoked)})
	hs := httptest.NewServer(authenticate(h))
	t.Cleanup(hs.Close)
	return hs
}

// TestAWaitEndsWhenItsTokenNoLongerHolds: a blocking call whose caller's
// token a reload removed (Options.Still says it no longer holds) ends
// with a tool error at its next wait slice, and the question stays
// parked; before, it waited on and handed the removed token the person's
// answer, hours later.
func TestAWaitEndsWhenItsTokenNoLongerHolds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	var revoked atomic.Bool
	hs := stillServer(t, svc, 20*time.Millisecond, &revoked)
	cs, _ := aliceOn(t, ctx, hs.URL, nil)
	out := callOn(ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "reversible"}})
	q := waitParked(t, ctx, svc)
	revoked.Store(true)
	res := result(t, ctx, out)
	if !res.IsError || !strings.Contains(text(t, res), "no longer holds") {
		t.Fatalf("the call after its token was removed: %+v", res)
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
		t.Fatalf("the question: %+v, %v; want it still parked", got, err)
	}
}

// TestAnAnswerInTheSliceOfTheRemovalIsWithheld: an answer that comes in
// the very wait slice during which a reload removed the call's token is
// not handed to it: the call ends with the same tool error, nothing of
// the answer in it. Before, the token was checked only as a slice began,
// so the removed token got an answer that came before the next.
func TestAnAnswerInTheSliceOfTheRemovalIsWithheld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	var revoked atomic.Bool
	hs := stillServer(t, svc, time.Hour, &revoked) // one slice outlasts the test
	cs, _ := aliceOn(t, ctx, hs.URL, nil)
	out := callOn(ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "reversible"}})
	q := waitParked(t, ctx, svc)
	revoked.Store(true)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Text: "the vault code is 1234"}); err != nil {
		t.Fatal(err)
	}
	res := result(t, ctx, out)
	if got := text(t, res); !res.IsError || !strings.Contains(got, "no longer holds") || strings.Contains(got, "1234") {
		t.Fatalf("the call whose token was removed before the answer: %+v", res)
	}
}

// TestTaskListenWithholdsAnEndOnceItsTokenNoLongerHolds: a listen stream
// whose token a reload removed sends no notification of a task that ends
// after the removal (it carries the person's answer), nor its closing
// response: the stream ends. Before, the token was checked only once a
// wait slice had passed, so a task that ended sooner was sent whole.
func TestTaskListenWithholdsAnEndOnceItsTokenNoLongerHolds(t *testing.T) {
	var revoked atomic.Bool
	e := newTaskEnvWith(t, func(o *mcp.Options) { o.WaitSlice, o.Still = time.Hour, revocable(&revoked) })
	alice := e.host("tok-alice", tasksCaps(false))
	id := asTask(t, must(t)(alice.callTool(e.ctx, mcp.ToolClarification, map[string]any{"question": "Which?", "reversibility": "reversible"}))).TaskID
	res, _, err := alice.post(e.ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	acked := false
	for !acked && sc.Scan() {
		acked = strings.Contains(sc.Text(), "notifications/subscriptions/acknowledged")
	}
	if !acked {
		t.Fatalf("no acknowledgement (%v)", sc.Err())
	}
	revoked.Store(true)
	e.answer(core.AnswerInput{QuestionID: core.QuestionID(id), Text: "the vault code is 1234"})
	for sc.Scan() { // until the stream ends
		if l := sc.Text(); strings.HasPrefix(l, "data:") {
			t.Errorf("sent once its token no longer held: %s", l)
		}
	}
}
