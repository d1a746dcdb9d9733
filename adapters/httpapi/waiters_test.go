package httpapi_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestWaitsOnOneQuestionAreBounded: past MaxWaitsPerQuestion waits parked
// on one question, the next is answered at once, 429 with Retry-After in
// the API's error shape (the Go client's error for it matching
// ErrForbidden, with its RetryAfter), and parks nothing; another question
// still parks its waits, another agent still reads the question as
// unknown, a wait whose client left frees its place at once, and the
// close answers every wait parked. Before, nothing bounded them: an agent
// that started a wait per retry without ending the last held a
// connection, a file descriptor of the bridge's, for each, for up to
// MaxWait, until every door of the bridge was refused its next
// connection.
func TestWaitsOnOneQuestionAreBounded(t *testing.T) {
	const most = 2
	e := newEnvOn(t, coretest.OpenStore(t), func(_ *core.Service, o *httpapi.Options) { o.MaxWaitsPerQuestion = most })
	srv, tookOver := takingServer(t, e)
	id := e.ask(agentA, "run-bound")
	first := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of the first wait")
	second := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of the second wait")

	r := e.do(http.MethodGet, "/v1/questions/"+string(id)+"/wait?timeout=1m", &agentA, "")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "1" {
		t.Fatalf("a wait past the bound: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if got := errorOf(t, r); got.Code != core.CodeForbidden || !strings.Contains(got.Message, "already has 2 waits parked") {
		t.Fatalf("a wait past the bound says %+v", got)
	}
	_, err := e.as(agentA).WaitOnce(e.ctx(), id, time.Minute)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusTooManyRequests || ce.RetryAfter != time.Second || !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("the client's error for a wait past the bound: %v", err)
	}
	// The bound is the question's: another question parks, and another
	// agent learns nothing of this one.
	other := e.ask(agentA, "run-bound")
	startWait(t, srv, other, "timeout=1m")
	await(t, e, tookOver, "the take-over of a wait on another question")
	if r := e.do(http.MethodGet, "/v1/questions/"+string(id)+"/wait?timeout=1m", &agentB, ""); r.status != http.StatusNotFound {
		t.Fatalf("another agent's wait on the question: %d %s", r.status, r.body)
	}

	// A client that leaves frees its place at once. (The refused waits
	// stopped their watches before they were answered: those are noted
	// already, and are not the freeing looked for.)
	for len(e.store.stopped) > 0 {
		<-e.store.stopped
	}
	first.Close()
	for freed := core.QuestionID(""); freed != id; {
		freed = await(t, e, e.store.stopped, "the freeing of the wait whose client left")
	}
	third := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of a wait in the freed place")

	// The close answers every wait parked.
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		r    waitReply
	}{{"second", readReply(t, e, second)}, {"third", readReply(t, e, third)}} {
		var w client.WaitResponse
		if err := json.Unmarshal(c.r.body, &w); c.r.status != http.StatusOK || err != nil || w.State != core.StateAnswered {
			t.Errorf("the %s wait: %d %s", c.name, c.r.status, c.r.body)
		}
	}
	// Answered, the question parks nothing, so no bound applies.
	if r := e.do(http.MethodGet, "/v1/questions/"+string(id)+"/wait?timeout=1m", &agentA, ""); r.status != http.StatusOK {
		t.Fatalf("a wait on the answered question: %d %s", r.status, r.body)
	}
}

// TestAWaitParkedInItsHandlerFreesItsPlace: a wait that is not taken over
// (one sent with a body parks in its handler) counts against its
// question's bound like any, and frees its place when it ends: here its
// client hangs up, and the one place the question has is free for the
// next wait, which the wait after that is then refused.
func TestAWaitParkedInItsHandlerFreesItsPlace(t *testing.T) {
	e := newEnvOn(t, coretest.OpenStore(t), func(_ *core.Service, o *httpapi.Options) { o.MaxWaitsPerQuestion = 1 })
	srv, tookOver := takingServer(t, e)
	id := e.ask(agentA, "run-bound")
	conn, _ := dialRaw(t, e, srv)
	fmt.Fprintf(conn, "GET /v1/questions/%s/wait?timeout=1m HTTP/1.1\r\nHost: askbridge\r\nAuthorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}", id, agentA.Secret)
	e.parked(id)
	conn.Close()
	// The place is freed before the watch stops (park's defers).
	if got := await(t, e, e.store.stopped, "the freeing of the wait whose client left"); got != id {
		t.Fatalf("the watch on %s stopped, want %s", got, id)
	}
	next := startWait(t, srv, id, "timeout=1m")
	await(t, e, tookOver, "the take-over of a wait in the freed place")
	if r := e.do(http.MethodGet, "/v1/questions/"+string(id)+"/wait?timeout=1m", &agentA, ""); r.status != http.StatusTooManyRequests {
		t.Fatalf("a wait past the bound of 1: %d %s", r.status, r.body)
	}
	if _, err := e.as(operator).Answer(e.ctx(), id, client.AnswerRequest{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}
	if r := readReply(t, e, next); r.status != http.StatusOK {
		t.Fatalf("the wait in the freed place: %d %s", r.status, r.body)
	}
}
