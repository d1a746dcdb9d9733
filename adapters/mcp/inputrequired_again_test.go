package mcp_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// hostRecorded tells when the host's answer has been recorded.
type hostRecorded struct {
	mcp.ServiceBackend
	recorded chan struct{}
}

func (b *hostRecorded) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	err := b.ServiceBackend.AnswerInHost(ctx, in)
	if err == nil {
		b.recorded <- struct{}{}
	}
	return err
}

// TestInputRequiredRetrySentAgainIsToldItsAnswersAreIn: on 2026-07-28
// without tasks, a host's retry whose reply answered part of a form was
// recorded, and the call then waited for chat; its POST was cut, and the
// host sends the same retry again. Its reply now answers a form that has
// changed since (by the host's own answer), so none of it is recorded
// again: the host is told its answer is in, and asked the rest. Before,
// it was told "Your answer was not recorded", which was untrue.
func TestInputRequiredRetrySentAgainIsToldItsAnswersAreIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	b := &hostRecorded{ServiceBackend: mcp.ServiceBackend{Svc: svc}, recorded: make(chan struct{}, 1)}
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(b, mcp.Options{WaitSlice: 20 * time.Millisecond, Caller: agentOf})))
	defer hs.Close()
	u, _ := url.Parse(hs.URL)
	host := formHost(t, &balancer{r: &replicas{urls: []*url.URL{u}}, token: "tok-alice"})
	args := map[string]any{"reversibility": "reversible", "questions": threeItems["questions"].([]map[string]any)[:2]}
	first := asInputRequired(t, must(t)(host.callTool(ctx, mcp.ToolQuestions, args)))
	key := onlyRequest(t, first.InputRequests).key
	reply := map[string]any{"action": "accept", "content": map[string]any{"q1": "go"}}

	cut, cutPOST := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = retryWith(cut, host, mcp.ToolQuestions, args, first.RequestState, key, reply) // waits for chat, until cut
	}()
	select {
	case <-b.recorded:
	case <-ctx.Done():
		t.Fatal("the host's answer was never recorded")
	}
	cutPOST()
	<-done

	again := asInputRequired(t, must(t)(retryWith(ctx, host, mcp.ToolQuestions, args, first.RequestState, key, reply)))
	rest := onlyRequest(t, again.InputRequests)
	if !rest.asks("q2") || rest.asks("q1") {
		t.Errorf("asked again %+v, want the second question alone", rest)
	}
	msg := again.InputRequests[rest.key].Params.Message
	if !strings.HasPrefix(msg, "Your answer to question 1 is in. Answer the rest here.") || strings.Contains(msg, "not recorded") {
		t.Errorf("the host is told %q", msg)
	}
	q := waitParked(t, ctx, svc)
	if a, ok := q.Answered("lang"); !ok || a.OptionID != "go" || a.Decider.Surface != core.SurfaceMCP || len(q.Answers) != 1 {
		t.Errorf("answers %+v, want lang=go from the host alone", q.Answers)
	}
}
