package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
	"github.com/askbridge/askbridge/internal/coretest"
)

// landsThenFails records the host's answer once and then reports the
// server unreachable, as a reply cut by a restart after the write.
type landsThenFails struct {
	ServiceBackend
	once atomic.Bool
}

func (b *landsThenFails) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	if err := b.ServiceBackend.AnswerInHost(ctx, in); err != nil || !b.once.CompareAndSwap(false, true) {
		return err
	}
	return unreachable
}

// hostRetry sends the 2026-07-28 retry of a clarification carrying the
// host's accepted reply "left" to the form of q, through backend b.
func hostRetry(t *testing.T, b Backend, q *core.Question) (*mcpsdk.CallToolResult, Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req := &mcpsdk.CallToolRequest{Params: &mcpsdk.CallToolParamsRaw{Name: ToolClarification, RequestState: string(q.ID),
		InputResponses: mcpsdk.InputResponseMap{hostKey(q.ID, formFor(q), 0): &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "left"}}}}}
	res, r, err := newHandler(b).retry(ctx, req, core.KindClarification)
	if err != nil || res == nil || r.QuestionID != q.ID {
		t.Fatalf("the reply: %+v, %+v, %v; want a result naming %s", res, r, err, q.ID)
	}
	return res, r
}

// TestHostReplyOutlivesAPassingFailure: the host's reply (the 2026-07-28
// retry of the call) that meets a passing failure of the server (it is
// restarting, or its store failing over) is recorded once the server is
// back: the reply is the one copy of the person's answer, which the host
// does not send again once the call has a result. Before, a failed read
// of the question, or a failed write of the answer, dropped the reply,
// and the call waited for chat as if the person had never answered.
// A write that failed after it landed is not recorded twice; and a
// failure that outlasts the tries ends in a result that says the answer
// may not have been recorded, not "waiting for the answer failed".
func TestHostReplyOutlivesAPassingFailure(t *testing.T) {
	// The host of agent a may answer on the default route.
	svc, _ := coretest.Open(t, coretest.Options{Routes: map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}, core.SurfaceMCP: {"a"}}},
	}})
	ask := func(t *testing.T, b Backend, run string) *core.Question {
		q, err := b.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, RunID: core.RunID(run), Text: "Which way?", Reversibility: core.Reversible})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	answeredInHost := func(t *testing.T, res *mcpsdk.CallToolResult, r Result, id core.QuestionID) {
		t.Helper()
		q, err := svc.Get(t.Context(), id)
		if err != nil || q.State != core.StateAnswered || q.Resolution.Decider.Surface != core.SurfaceMCP || q.Resolution.Answer != "left" {
			t.Fatalf("the question after the reply: %+v, %v; want it answered in the host with %q", q, err, "left")
		}
		if res.IsError || r.State != core.StateAnswered {
			t.Fatalf("the result: %+v, %+v; want the answer", res.Content, r)
		}
		if p, err := fence.ParseResume(res.Content[0].(*mcpsdk.TextContent).Text); err != nil || p.Verb != fence.VerbAnswered {
			t.Fatalf("the resume: %+v, %v", p, err)
		}
	}
	t.Run("the read fails once", func(t *testing.T) {
		b := &flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}, failures: 1, err: unreachable}
		q := ask(t, b, "r-read")
		res, r := hostRetry(t, b, q)
		answeredInHost(t, res, r, q.ID)
	})
	t.Run("the write fails once", func(t *testing.T) {
		b := &hostFails{flaky: flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}}}
		b.answer.Store(true)
		q := ask(t, b, "r-write")
		res, r := hostRetry(t, b, q)
		answeredInHost(t, res, r, q.ID)
	})
	t.Run("the write lands, then fails", func(t *testing.T) {
		b := &landsThenFails{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}}
		q := ask(t, b, "r-landed")
		res, r := hostRetry(t, b, q)
		answeredInHost(t, res, r, q.ID)
	})
	t.Run("the server stays down", func(t *testing.T) {
		up := ServiceBackend{Svc: svc, Agent: "a"}
		q := ask(t, up, "r-down")
		res, r := hostRetry(t, &flaky{ServiceBackend: up, failures: 1 << 30, err: unreachable}, q)
		text := res.Content[0].(*mcpsdk.TextContent).Text
		if !res.IsError || r.State != core.StateOpen || !strings.Contains(text, "may not have been recorded") || !strings.Contains(text, unreachable.Message) {
			t.Fatalf("the result: %q, %+v; want an error saying the host's answer may not have been recorded, and why", text, r)
		}
		if got, err := svc.Get(t.Context(), q.ID); err != nil || !got.Open() {
			t.Fatalf("the question: %+v, %v; want it still open", got, err)
		}
	})
}
