package mcp

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func service(t *testing.T) *core.Service {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{})
	return svc
}

// flaky fails its first failures waits with err, then waits for real.
type flaky struct {
	ServiceBackend
	failures int32
	err      error
	calls    atomic.Int32
}

func (f *flaky) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (Status, error) {
	if f.calls.Add(1) <= f.failures {
		return Status{}, f.err
	}
	return f.ServiceBackend.Wait(ctx, id, d)
}

func newHandler(b Backend) *handler {
	return &handler{b: b, opts: Options{WaitSlice: time.Millisecond}.withDefaults(), run: "run-test"}
}

var question = clarificationInput{Question: "Which way?", Reversibility: reversibility(core.Reversible)}

func TestCallEndedLeavesQuestionParked(t *testing.T) {
	svc := service(t)
	h := newHandler(ServiceBackend{Svc: svc, Agent: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	type out struct {
		res *mcpsdk.CallToolResult
		r   Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, r, err := h.call(ctx, nil, question)
		done <- out{res, r, err}
	}()
	var id core.QuestionID
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); id == ""; {
		qs, _, err := svc.ListOpen(context.Background(), "", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) == 1 {
			id = qs[0].ID
		} else if time.Now().After(deadline) {
			t.Fatal("no question was parked")
		} else {
			<-tick.C
		}
	}
	cancel()
	o := <-done
	if o.err != nil || o.res == nil || !o.res.IsError {
		t.Fatalf("got %+v, %v; want an error result", o.res, o.err)
	}
	text := o.res.Content[0].(*mcpsdk.TextContent).Text
	if !strings.Contains(text, string(id)) || !strings.Contains(text, "still parked") {
		t.Errorf("error text %q does not say that question %s stays parked", text, id)
	}
	if o.r.QuestionID != id || o.r.State != core.StateOpen {
		t.Errorf("structured result is %+v", o.r)
	}
	if q, err := svc.Get(context.Background(), id); err != nil || !q.Open() {
		t.Errorf("question is %v, %v; want open", q, err)
	}
}

func TestWaitRetriesInternalErrors(t *testing.T) {
	svc := service(t)
	b := &flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}, failures: maxWaitFailures - 1, err: errors.New("connection refused")}
	h := newHandler(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := b.Ask(ctx, core.AskInput{Kind: core.KindClarification, RunID: "r", Text: "Which way?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "op"}, Text: "left"}); err != nil {
		t.Fatal(err)
	}
	res, r, err := h.await(ctx, nil, q.ID, -1)
	if err != nil || res.IsError || r.State != core.StateAnswered {
		t.Fatalf("after %d failed waits: %+v, %+v, %v; want the answer", maxWaitFailures-1, res, r, err)
	}
}

func TestWaitGivesUpAfterRepeatedFailures(t *testing.T) {
	svc := service(t)
	b := &flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}, failures: maxWaitFailures, err: errors.New("connection refused")}
	h := newHandler(b)
	ctx := context.Background()
	q, err := b.Ask(ctx, core.AskInput{Kind: core.KindClarification, RunID: "r", Text: "Which way?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	res, r, err := h.await(ctx, nil, q.ID, -1)
	if err != nil || res == nil || !res.IsError || r.State != core.StateOpen {
		t.Fatalf("got %+v, %+v, %v; want a parked error result", res, r, err)
	}
	text := res.Content[0].(*mcpsdk.TextContent).Text
	if !strings.Contains(text, string(q.ID)) || strings.Contains(text, "connection refused") {
		t.Errorf("error text %q: want the id and no internal detail", text)
	}
}

func TestWaitOnUnknownQuestionIsAToolError(t *testing.T) {
	b := &flaky{ServiceBackend: ServiceBackend{Svc: service(t), Agent: "a"}, failures: 1, err: core.ErrNotFound}
	h := newHandler(b)
	_, _, err := h.await(context.Background(), nil, "aaaaaaaaaaaaaaaaa", -1)
	if err == nil || err.Error() != "no such question" {
		t.Fatalf("got %v, want the caller-safe not-found message", err)
	}
}

// TestUnreachableServerIsNamed: a bridge that stays unreachable ends the
// call with the backend's own message (the URL and the cause), which the
// model can act on, and the question's id to collect it by later.
func TestUnreachableServerIsNamed(t *testing.T) {
	svc := service(t)
	msg := "askbridge server at http://127.0.0.1:9 is not reachable (connection refused); start it with `askbridge serve`"
	b := &flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}, failures: maxWaitFailures, err: &UnavailableError{Message: msg, Err: errors.New("dial tcp: connection refused")}}
	h := newHandler(b)
	ctx := context.Background()
	q, err := b.Ask(ctx, core.AskInput{Kind: core.KindClarification, RunID: "r", Text: "Which way?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := h.await(ctx, nil, q.ID, -1)
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("got %+v, %v; want a parked error result", res, err)
	}
	text := res.Content[0].(*mcpsdk.TextContent).Text
	if !strings.Contains(text, msg) || !strings.Contains(text, string(q.ID)) || !strings.Contains(text, ToolGetAnswer) {
		t.Errorf("error text %q: want the server's URL and cause, the id and get_answer", text)
	}
	if err := h.toolError(&UnavailableError{Message: msg}); err.Error() != msg {
		t.Errorf("tool error %q, want %q", err, msg)
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "30m": 30 * time.Minute, "2h": 2 * time.Hour, "1d": 24 * time.Hour,
		" 1D ": 24 * time.Hour, "1h30m": 90 * time.Minute, "1d12h": 36 * time.Hour, "7d": 7 * 24 * time.Hour,
	} {
		if got, err := parseTimeout(in); err != nil || got != want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "0s", "0d", "-5m", "1.5d", "d", "2 hours", "1dd"} {
		_, err := parseTimeout(in)
		if core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "90s, 30m, 2h or 1d") {
			t.Errorf("parseTimeout(%q): %v; want a refusal naming the accepted forms", in, err)
		}
	}
	// Under a second is refused, as the HTTP API refuses it: before, "1ns"
	// parked a question that timed out at the next tick.
	for _, in := range []string{"1ns", "500ms", "999ms"} {
		if _, err := parseTimeout(in); core.ErrorCode(err) != core.CodeInvalid || !strings.Contains(core.ErrorMessage(err), "minimum, 1s") {
			t.Errorf("parseTimeout(%q): %v; want a refusal naming the minimum", in, err)
		}
	}
	if got, err := parseTimeout("1s"); err != nil || got != core.MinAskTimeout {
		t.Errorf("parseTimeout(1s) = %v, %v", got, err)
	}
}

// unreachable is the error of a server that is restarting.
var unreachable = &UnavailableError{Message: "askbridge server at http://askbridge.example is not reachable"}

// hostFails is flaky whose next recording of the host's answer fails too,
// as a server that is restarting does.
type hostFails struct {
	flaky
	answer atomic.Bool
}

func (f *hostFails) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	if f.answer.CompareAndSwap(true, false) {
		return unreachable
	}
	return f.ServiceBackend.AnswerInHost(ctx, in)
}

// TestHostReplyMeetingAFailureNamesTheQuestion: the host's reply (the
// 2026-07-28 retry of the call) that meets a passing failure of the
// server ends, like any wait, with the question's id to follow and the
// question still parked; before, it was an error with no id, and a model
// that asked again parked the question twice.
func TestHostReplyMeetingAFailureNamesTheQuestion(t *testing.T) {
	svc := service(t)
	for _, fail := range []string{"answer", "wait"} {
		t.Run(fail, func(t *testing.T) {
			b := &hostFails{flaky: flaky{ServiceBackend: ServiceBackend{Svc: svc, Agent: "a"}, err: unreachable}}
			h := newHandler(b)
			q, err := b.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, RunID: core.RunID("r-" + fail), Text: "Which way?", Reversibility: core.Reversible})
			if err != nil {
				t.Fatal(err)
			}
			b.answer.Store(fail == "answer")
			if fail == "wait" {
				b.failures = 1
			}
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			req := &mcpsdk.CallToolRequest{Params: &mcpsdk.CallToolParamsRaw{Name: ToolClarification, RequestState: string(q.ID),
				InputResponses: mcpsdk.InputResponseMap{hostKey(q.ID, formFor(q), 0): &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "left"}}}}}
			res, r, err := h.retry(ctx, req, core.KindClarification)
			if err != nil || res == nil || r.QuestionID != q.ID {
				t.Fatalf("the reply after a failure: %+v, %+v, %v; want a result naming %s", res, r, err, q.ID)
			}
		})
	}
}

// TestGetAnswerBoundHoldsWhileTheBridgeIsDown: get_answer's wait_seconds
// bounds the call however the waits go. With the bridge unreachable (the
// server restarting, say), wait_seconds 0 answers at once and 10 within
// ten seconds, saying why and naming the question; before, each failure
// paused a whole wait slice before the next try, and the call came back
// only after four of them (a minute), past a host's usual request
// timeout, whatever it had asked for.
func TestGetAnswerBoundHoldsWhileTheBridgeIsDown(t *testing.T) {
	for _, limit := range []time.Duration{0, 10 * time.Second} {
		t.Run(limit.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &flaky{failures: 1 << 30, err: unreachable} // every wait fails
				h := &handler{b: b, opts: Options{}.withDefaults(), run: "run-test"}
				const id core.QuestionID = "aaaaaaaaaaaaaaaaa"
				start := time.Now()
				res, r, err := h.await(t.Context(), nil, id, limit)
				if took := time.Since(start); took > limit {
					t.Errorf("get_answer with a bound of %s came back after %s", limit, took)
				}
				if err != nil || res == nil || !res.IsError || r.QuestionID != id {
					t.Fatalf("got %+v, %+v, %v; want an error result naming %s", res, r, err, id)
				}
				text := res.Content[0].(*mcpsdk.TextContent).Text
				if !strings.Contains(text, string(id)) || !strings.Contains(text, unreachable.Message) {
					t.Errorf("text %q: want the question's id and why the wait failed", text)
				}
			})
		})
	}
}

// TestUnreadQuestionIsNotCalledUnanswered: a wait that ends while the
// question cannot be read (the bridge unreachable: get_answer's bound
// spent, an asking tool's tries used up, or the call ended between two
// failed tries) says that its state could not be read, and why, and that
// it stays parked under its id; it never says that nobody has answered
// it, which nobody could tell. The structured state stays "open": the
// output schema's state enum has no value for a state not known. Before,
// the text said "Nobody has answered it yet" all the same.
func TestUnreadQuestionIsNotCalledUnanswered(t *testing.T) {
	const id core.QuestionID = "aaaaaaaaaaaaaaaaa"
	for _, c := range []struct {
		name  string
		limit time.Duration
		ends  time.Duration // the call's own end; 0 for none
	}{
		{"get_answer's bound", 10 * time.Second, 0},
		{"an asking tool's tries", -1, 0},
		{"the call's end between tries", -1, DefaultWaitSlice / 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &flaky{failures: 1 << 30, err: unreachable} // every wait fails
				h := &handler{b: b, opts: Options{}.withDefaults(), run: "run-test"}
				ctx := t.Context()
				if c.ends > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, c.ends)
					defer cancel()
				}
				res, r, err := h.await(ctx, nil, id, c.limit)
				if err != nil || res == nil || !res.IsError {
					t.Fatalf("got %+v, %v; want an error result", res, err)
				}
				text := res.Content[0].(*mcpsdk.TextContent).Text
				for _, want := range []string{string(id), "its state could not be read", unreachable.Message, "it stays parked", ToolGetAnswer} {
					if !strings.Contains(text, want) {
						t.Errorf("text %q: want %q in it", text, want)
					}
				}
				if strings.Contains(strings.ToLower(text), "nobody has answered") {
					t.Errorf("text %q says nobody has answered a question that could not be read", text)
				}
				if r.QuestionID != id || r.State != core.StateOpen {
					t.Errorf("structured %+v, want question %s, state open (the schema's enum has no other)", r, id)
				}
			})
		})
	}
}
