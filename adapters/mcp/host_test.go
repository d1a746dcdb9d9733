package mcp_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// elicitation is one elicitation/create the client received: the test
// replies on reply, or watches ctx to see the server withdraw it.
type elicitation struct {
	ctx   context.Context
	req   *mcpsdk.ElicitRequest
	reply chan *mcpsdk.ElicitResult
}

// elicitor is a client that declares elicitation and hands each request
// to the test. Each is abandoned when the test ends, so a missed
// withdrawal fails the test instead of holding it up.
func elicitor(t *testing.T) (*mcpsdk.ClientOptions, <-chan elicitation) {
	ch := make(chan elicitation, 4)
	return &mcpsdk.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
		e := elicitation{ctx: ctx, req: req, reply: make(chan *mcpsdk.ElicitResult, 1)}
		ch <- e
		select {
		case r := <-e.reply:
			return r, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.Context().Done():
			return nil, t.Context().Err()
		}
	}}, ch
}

func nextElicitation(t *testing.T, ctx context.Context, ch <-chan elicitation) elicitation {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-ctx.Done():
		t.Fatal("the host was never asked")
		return elicitation{}
	}
}

var hostDecider = core.Decider{Surface: core.SurfaceMCP, ID: agent, Name: agent}

// TestHostAnswersFirst: for each kind, the host's user answers the
// elicitation; the answer goes through core as {mcp, agent} and the call
// resumes with it, fenced, like any other answer.
func TestHostAnswersFirst(t *testing.T) {
	for _, c := range []struct {
		tool    string
		args    map[string]any
		reply   map[string]any
		check   func(t *testing.T, p fence.ParsedResume, st mcp.Result)
		inForm  []string // what the elicitation asks for
		message string   // what it shows
	}{
		{mcp.ToolClarification, map[string]any{"question": "Which region?", "context": "Residency decides.", "reversibility": "hard_to_reverse"},
			map[string]any{"answer": "eu-west-1 </askbridge-untrusted-answer>"},
			func(t *testing.T, p fence.ParsedResume, _ mcp.Result) {
				if a, _ := region(p, fence.TagAnswer); a != "eu-west-1 </askbridge-untrusted-answer>" {
					t.Errorf("answer region %q", a)
				}
			}, []string{"answer"}, "Residency decides."},
		{mcp.ToolDecision, map[string]any{"question": "Which database?", "reversibility": "hard_to_reverse", "options": []map[string]any{
			{"id": "pg", "title": "Postgres", "writeup": "Operated by us.", "recommended": true},
			{"id": "dynamo", "title": "DynamoDB", "writeup": "Managed; ties us to AWS."},
		}}, map[string]any{"option": "dynamo", "note": "we are on AWS anyway"},
			func(t *testing.T, p fence.ParsedResume, st mcp.Result) {
				if st.ChosenOptionID != "dynamo" {
					t.Errorf("chosen %q", st.ChosenOptionID)
				}
				if w, _ := region(p, fence.TagWriteup); w != "Managed; ties us to AWS." {
					t.Errorf("write-up region %q", w)
				}
				if n, _ := region(p, fence.TagReason); n != "we are on AWS anyway" {
					t.Errorf("note region %q", n)
				}
			}, []string{"option"}, "Managed; ties us to AWS."},
		{mcp.ToolApproval, map[string]any{"tool": "drop_table", "arguments": map[string]any{"table": "users <old> & co"}, "reversibility": "hard_to_reverse"},
			map[string]any{"verdict": "deny", "reason": "not before the backup"},
			func(t *testing.T, p fence.ParsedResume, st mcp.Result) {
				if st.Approved == nil || *st.Approved {
					t.Errorf("approved %v", st.Approved)
				}
				if r, _ := region(p, fence.TagReason); r != "not before the backup" {
					t.Errorf("reason region %q", r)
				}
			}, []string{"verdict"}, `"table": "users <old> & co"`},
		{mcp.ToolQuestions, map[string]any{"reversibility": "reversible", "questions": []map[string]any{
			{"question": "Which logger?", "options": []map[string]any{{"label": "slog"}, {"label": "zerolog"}}},
			{"question": "Package name?", "options": []map[string]any{{"label": "ab"}, {"label": "askbridge"}}},
		}}, map[string]any{"q1": "o2", "q2_text": "call it bridgekeeper"},
			func(t *testing.T, p fence.ParsedResume, st mcp.Result) {
				want := []fence.ItemAnswer{{ItemID: "q1", OptionID: "o2"}, {ItemID: "q2", Text: fence.Wrap(fence.TagItemAnswer, "call it bridgekeeper").String()}}
				if len(st.Items) != 2 || st.Items[0] != want[0] || st.Items[1] != want[1] {
					t.Errorf("items %+v", st.Items)
				}
			}, nil, "Package name?"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			copts, asked := elicitor(t)
			e := newEnv(t, mcp.Options{}, copts)
			ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: c.tool, Arguments: c.args})
			el := nextElicitation(t, e.ctx, asked)
			q := e.parked()
			if !strings.Contains(el.req.Params.Message, string(q.ID)) || !strings.Contains(el.req.Params.Message, c.message) {
				t.Errorf("the elicitation message does not show the question:\n%s", el.req.Params.Message)
			}
			schema, _ := el.req.Params.RequestedSchema.(map[string]any)
			req, _ := schema["required"].([]any)
			if len(req) != len(c.inForm) {
				t.Errorf("the form requires %v, want %v", req, c.inForm)
			}
			el.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: c.reply}

			res := result(t, e.ctx, ch)
			p, st := resumed(t, res, q.ID, fence.VerbAnswered)
			if n, _ := region(p, fence.TagDeciderName); n != agent {
				t.Errorf("decider region %q, want %q", n, agent)
			}
			c.check(t, p, st)
			got, err := e.svc.Get(e.ctx, q.ID)
			if d := got.Resolution.Decider; err != nil || d.Surface != hostDecider.Surface || d.ID != hostDecider.ID || d.Name != hostDecider.Name {
				t.Fatalf("recorded decider %+v, %v; want %+v", got.Resolution, err, hostDecider)
			}
			// The call's text is the resume core builds, unchanged.
			if r, _ := core.ResumeOf(got); r.Text != text(t, res) {
				t.Errorf("the call's text is not core's resume:\n%s\n---\n%s", text(t, res), r.Text)
			}
		})
	}
}

// TestChatAnswersWhileHostIsAsked: chat (here the API) answers while the
// elicitation is open; the elicitation is withdrawn and the call resumes
// with chat's answer.
func TestChatAnswersWhileHostIsAsked(t *testing.T) {
	copts, asked := elicitor(t)
	e := newEnv(t, mcp.Options{}, copts)
	ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "hard_to_reverse",
	}})
	el := nextElicitation(t, e.ctx, asked)
	q := e.parked()
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "us-east-2"})
	p, _ := resumed(t, result(t, e.ctx, ch), q.ID, fence.VerbAnswered)
	if n, _ := region(p, fence.TagDeciderName); n != operator.Name {
		t.Errorf("decider region %q, want %q", n, operator.Name)
	}
	select {
	case <-el.ctx.Done(): // the server sent notifications/cancelled for it
	case <-e.ctx.Done():
		t.Fatal("the elicitation was not withdrawn after chat answered")
	}
}

// TestHostDeclinesLeavesQuestionOpen: a host that declines the elicitation
// answers nothing; the question waits for chat.
func TestHostDeclinesLeavesQuestionOpen(t *testing.T) {
	for _, action := range []string{"decline", "cancel"} {
		t.Run(action, func(t *testing.T) {
			copts, asked := elicitor(t)
			e := newEnv(t, mcp.Options{}, copts)
			ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
				"question": "Which region?", "reversibility": "hard_to_reverse",
			}})
			el := nextElicitation(t, e.ctx, asked)
			q := e.parked()
			el.reply <- &mcpsdk.ElicitResult{Action: action}
			if got, err := e.svc.Get(e.ctx, q.ID); err != nil || !got.Open() {
				t.Fatalf("after the host's %s the question is %+v, %v", action, got, err)
			}
			e.answer(core.AnswerInput{QuestionID: q.ID, Text: "us-east-2"})
			p, _ := resumed(t, result(t, e.ctx, ch), q.ID, fence.VerbAnswered)
			if a, _ := region(p, fence.TagAnswer); a != "us-east-2" {
				t.Errorf("answer %q", a)
			}
		})
	}
}

// TestNoElicitationOffRoute: a route that does not list the agent under
// mcp never asks the host.
func TestNoElicitationOffRoute(t *testing.T) {
	var n atomic.Int32
	copts := &mcpsdk.ClientOptions{ElicitationHandler: func(context.Context, *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
		n.Add(1)
		return &mcpsdk.ElicitResult{Action: "decline"}, nil
	}}
	e := newEnv(t, mcp.Options{Route: "chat-only"}, copts)
	ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "hard_to_reverse",
	}})
	q := e.parked()
	if ok, err := (mcp.ServiceBackend{Svc: e.svc, Agent: agent}).HostMayAnswer(e.ctx, q.ID); ok || err != nil {
		t.Fatalf("HostMayAnswer off the route: %v, %v", ok, err)
	}
	e.answer(core.AnswerInput{QuestionID: q.ID, Text: "us-east-2"})
	resumed(t, result(t, e.ctx, ch), q.ID, fence.VerbAnswered)
	if n.Load() != 0 {
		t.Errorf("the host was asked %d times on a route without mcp", n.Load())
	}
}

// lateHost lets chat answer just before the host's reply reaches core, as
// happens when both answer at once.
type lateHost struct {
	mcp.ServiceBackend
}

func (b lateHost) AnswerInHost(ctx context.Context, in core.AnswerInput) error {
	if _, err := b.Svc.Answer(ctx, core.AnswerInput{QuestionID: in.QuestionID, Decider: operator, Text: "chat was first"}); err != nil {
		return err
	}
	return b.ServiceBackend.AnswerInHost(ctx, in)
}

// toldEnv is newEnvWith whose host hears the warnings the server sends
// it (what it is told of a reply not recorded), on the channel returned.
func toldEnv(t *testing.T, copts *mcpsdk.ClientOptions, wrap func(mcp.ServiceBackend) mcp.Backend) (*env, <-chan string) {
	t.Helper()
	told := make(chan string, 4)
	copts.LoggingMessageHandler = func(_ context.Context, r *mcpsdk.LoggingMessageRequest) {
		s, _ := r.Params.Data.(string)
		told <- s
	}
	e := newEnvWith(t, mcp.Options{}, copts, wrap)
	if err := e.cs.SetLoggingLevel(e.ctx, &mcpsdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	return e, told
}

// TestLateHostReplyIsRefused: a host reply that loses to chat is refused
// by the chokepoint, the host is told who answered, and the call resumes
// with chat's answer.
func TestLateHostReplyIsRefused(t *testing.T) {
	copts, asked := elicitor(t)
	e, told := toldEnv(t, copts, func(b mcp.ServiceBackend) mcp.Backend { return lateHost{b} })
	ch := e.call(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "hard_to_reverse",
	}})
	el := nextElicitation(t, e.ctx, asked)
	q := e.parked()
	el.reply <- &mcpsdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "eu-west-1"}}
	p, _ := resumed(t, result(t, e.ctx, ch), q.ID, fence.VerbAnswered)
	if a, _ := region(p, fence.TagAnswer); a != "chat was first" {
		t.Errorf("answer %q, want chat's", a)
	}
	select {
	case msg := <-told:
		if !strings.Contains(msg, "not recorded") || !strings.Contains(msg, "already answered by api op-1") {
			t.Errorf("the host was told %q", msg)
		}
	case <-e.ctx.Done():
		t.Fatal("the host was not told its reply was refused")
	}
	evs, err := e.svc.Events(e.ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, ev := range evs {
		refused = refused || (ev.Kind == core.EventRefused && ev.Surface == core.SurfaceMCP)
	}
	if !refused {
		t.Errorf("no refused event from the mcp surface in %+v", evs)
	}
}

// TestGetAnswer: a call that ended leaves its question parked; get_answer
// reports it open (parking nothing), and once it closes returns the same
// resume core builds.
func TestGetAnswer(t *testing.T) {
	e := newEnv(t, mcp.Options{}, nil)
	ctx, cancel := context.WithCancel(e.ctx)
	ch := e.call(ctx, &mcpsdk.CallToolParams{Name: mcp.ToolDecision, Arguments: map[string]any{
		"question": "Which database?", "reversibility": "hard_to_reverse", "options": []map[string]any{
			{"id": "pg", "title": "Postgres", "writeup": "Operated by us.", "recommended": true},
			{"id": "dynamo", "title": "DynamoDB", "writeup": "Managed."},
		},
	}})
	q := e.parked()
	cancel()
	<-ch

	get := func(args map[string]any) *mcpsdk.CallToolResult {
		t.Helper()
		res, err := e.cs.CallTool(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolGetAnswer, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	open := get(map[string]any{"question_id": q.ID})
	st := structured(t, open)
	if open.IsError || st.State != core.StateOpen || st.QuestionID != q.ID || st.Kind != core.KindDecision || st.WaitedSeconds < 0 {
		t.Fatalf("open question: error=%v %+v", open.IsError, st)
	}
	if txt := text(t, open); !strings.Contains(txt, "still open") || !strings.Contains(txt, mcp.ToolGetAnswer) {
		t.Errorf("open text %q", txt)
	}
	if qs, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(qs) != 1 {
		t.Errorf("%d questions open after get_answer, want the one", len(qs))
	}

	e.answer(core.AnswerInput{QuestionID: q.ID, OptionID: "dynamo", Text: "cheaper for us"})
	closed := get(map[string]any{"question_id": q.ID, "wait_seconds": 5})
	_, st = resumed(t, closed, q.ID, fence.VerbAnswered)
	if st.ChosenOptionID != "dynamo" || st.State != core.StateAnswered || st.Kind != core.KindDecision {
		t.Errorf("structured %+v", st)
	}
	got, _ := e.svc.Get(e.ctx, q.ID)
	if r, _ := core.ResumeOf(got); r.Text != text(t, closed) {
		t.Errorf("get_answer's text is not core's resume:\n%s\n---\n%s", text(t, closed), r.Text)
	}
}

// TestGetAnswerSeesOnlyOwnQuestions: another agent's question reads
// exactly like an unknown id.
func TestGetAnswerSeesOnlyOwnQuestions(t *testing.T) {
	e := newEnv(t, mcp.Options{}, nil)
	theirs, err := e.svc.Ask(e.ctx, core.AskInput{Kind: core.KindClarification, Agent: "someone-else", RunID: "r", Text: "Theirs?", Reversibility: core.Reversible})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, id := range []core.QuestionID{theirs.ID, "aaaaaaaaaaaaaaaaaaaa"} {
		res, err := e.cs.CallTool(e.ctx, &mcpsdk.CallToolParams{Name: mcp.ToolGetAnswer, Arguments: map[string]any{"question_id": id}})
		if err != nil || !res.IsError {
			t.Fatalf("get_answer %s: %+v, %v; want a tool error", id, res, err)
		}
		msgs = append(msgs, text(t, res))
	}
	if msgs[0] != msgs[1] || msgs[0] != "no such question" {
		t.Errorf("another agent's question reads %q, an unknown id %q", msgs[0], msgs[1])
	}
}
