package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

type agentKey struct{}

// authenticate stands for the server's own authentication in front of
// /mcp: it maps bearer tokens to agent names in the request's context.
func authenticate(next http.Handler) http.Handler {
	names := map[string]string{"Bearer tok-alice": "alice", "Bearer tok-mallory": "mallory"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := names[r.Header.Get("Authorization")]
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), agentKey{}, name)))
	})
}

func agentOf(r *http.Request) core.AgentID {
	name, _ := r.Context().Value(agentKey{}).(string)
	return core.AgentID(name)
}

// bearer sends whatever token it currently holds.
type bearer struct{ token atomic.Value }

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token.Load().(string))
	return http.DefaultTransport.RoundTrip(r)
}

func httpClient(t *testing.T, ctx context.Context, url string, b *bearer, copts *mcpsdk.ClientOptions) (*mcpsdk.ClientSession, error) {
	t.Helper()
	return mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-client", Version: "1"}, copts).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: b}, MaxRetries: -1}, legacy)
}

// aliceOn opens an MCP session at url as alice (tok-alice), closed when
// the test ends, and returns it with its bearer, whose token a test may
// change.
func aliceOn(t *testing.T, ctx context.Context, url string, copts *mcpsdk.ClientOptions) (*mcpsdk.ClientSession, *bearer) {
	t.Helper()
	b := &bearer{}
	b.token.Store("tok-alice")
	cs, err := httpClient(t, ctx, url, b, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, b
}

func TestStreamableHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	h := mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{WaitSlice: 20 * time.Millisecond, Version: "test", Caller: agentOf})
	hs := httptest.NewServer(authenticate(h))
	t.Cleanup(hs.Close) // after the session's own cleanup
	copts, progress := progressRecorder()
	cs, _ := aliceOn(t, ctx, hs.URL, copts)
	if v := cs.InitializeResult(); v == nil || v.ServerInfo == nil || v.ServerInfo.Version != "test" {
		t.Errorf("server info is %+v", v)
	}

	params := &mcpsdk.CallToolParams{Name: mcp.ToolDecision, Arguments: map[string]any{
		"question":      "Which database?",
		"reversibility": "hard_to_reverse",
		"options": []map[string]any{
			{"id": "pg", "title": "Postgres", "writeup": "Operated by us.", "recommended": true},
			{"id": "dynamo", "title": "DynamoDB", "writeup": "Managed; ties us to AWS."},
		},
	}}
	params.SetProgressToken("http-tok")
	out := callOn(ctx, cs, params)
	q := waitParked(t, ctx, svc)
	if q.Agent != "alice" {
		t.Errorf("the question was asked by %q, want the agent named in the request", q.Agent)
	}
	awaitProgress(t, ctx, progress, "http-tok", q.ID)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, OptionID: "pg"}); err != nil {
		t.Fatal(err)
	}
	_, st := resumed(t, result(t, ctx, out), q.ID, fence.VerbAnswered)
	if st.ChosenOptionID != "pg" {
		t.Errorf("chosen option is %q", st.ChosenOptionID)
	}
}

// TestClientGoneLeavesQuestionParked is the stdio case of an agent process
// that dies mid-call: its end of the pipes closes, the server's call ends,
// and the question stays parked.
func TestClientGoneLeavesQuestionParked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	srv := mcp.NewServer(mcp.ServiceBackend{Svc: svc, Agent: agent}, mcp.Options{})
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	ss, err := srv.Connect(ctx, &mcpsdk.IOTransport{Reader: toServerR, Writer: toClientW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-client", Version: "1"}, nil).
		Connect(ctx, &mcpsdk.IOTransport{Reader: toClientR, Writer: toServerW}, legacy)
	if err != nil {
		t.Fatal(err)
	}
	callCtx, stopCall := context.WithCancel(ctx)
	defer stopCall()
	go func() {
		_, _ = cs.CallTool(callCtx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
			"question": "Rename the repo?", "reversibility": "hard_to_reverse",
		}})
	}()
	q := waitParked(t, ctx, svc)

	// The agent process dies: both of its pipe ends close at once.
	_ = toServerW.Close()
	_ = toClientR.Close()
	done := make(chan struct{})
	go func() { _ = ss.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the server session did not end after its client went away")
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
		t.Fatalf("the question is %v, %v; want it still open", got, err)
	}
}

func TestHTTPSessionIsBoundToItsCaller(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{Caller: agentOf})))
	t.Cleanup(hs.Close) // after the session's own cleanup
	cs, b := aliceOn(t, ctx, hs.URL, nil)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("the session's own caller: %v", err)
	}
	b.token.Store("tok-mallory")
	if _, err := cs.ListTools(ctx, nil); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Fatalf("another caller on alice's session: %v, want it refused as forbidden", err)
	}
}

// TestIdleHTTPSessionIsClosed: a session that makes no request for
// SessionIdle is closed, and its client is then told so; a session under
// the default bound, idle as long, is still served.
func TestIdleHTTPSessionIsClosed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	const idle = 200 * time.Millisecond
	connect := func(opts mcp.Options) *mcpsdk.ClientSession {
		t.Helper()
		opts.Caller = agentOf
		hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, opts)))
		t.Cleanup(hs.Close)
		cs, _ := aliceOn(t, ctx, hs.URL, nil)
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("a fresh session: %v", err)
		}
		return cs
	}
	short, long := connect(mcp.Options{SessionIdle: idle}), connect(mcp.Options{})
	select { // both stay idle for five times the short bound
	case <-time.After(5 * idle):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if _, err := short.ListTools(ctx, nil); err == nil {
		t.Fatal("a session idle past SessionIdle was still served")
	}
	if _, err := long.ListTools(ctx, nil); err != nil {
		t.Fatalf("a session idle well within the default bound: %v", err)
	}
}

// endedWaits is a real backend that says when a wait ends because its
// call did.
type endedWaits struct {
	mcp.ServiceBackend
	ended chan struct{}
}

func (e *endedWaits) Wait(ctx context.Context, id core.QuestionID, d time.Duration) (mcp.Status, error) {
	st, err := e.ServiceBackend.Wait(ctx, id, d)
	if ctx.Err() != nil {
		select {
		case e.ended <- struct{}{}:
		default:
		}
	}
	return st, err
}

// TestKilledClientsCallEnds: when the client of a waiting call is killed
// (its connections drop, with no cancel sent), the call ends with its
// request, its question stays parked for get_answer, and the session,
// idle from then on, is closed: its id is then refused with 404.
func TestKilledClientsCallEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	const idle = 200 * time.Millisecond
	be := &endedWaits{ServiceBackend: mcp.ServiceBackend{Svc: svc}, ended: make(chan struct{}, 1)}
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(be, mcp.Options{SessionIdle: idle, WaitSlice: 20 * time.Millisecond, Caller: agentOf})))
	t.Cleanup(hs.Close) // after the session's own cleanup
	cs, _ := aliceOn(t, ctx, hs.URL, nil)
	go func() {
		_, _ = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: mcp.ToolClarification,
			Arguments: map[string]any{"question": "Which region?", "reversibility": "hard_to_reverse"}})
	}()
	q := waitParked(t, ctx, svc)
	hs.CloseClientConnections() // the agent is killed: its connections drop
	select {
	case <-be.ended:
	case <-ctx.Done():
		t.Fatal("the call of a client that is gone went on waiting")
	}
	if got, err := svc.Get(ctx, q.ID); err != nil || !got.Open() {
		t.Fatalf("its question: %v, %v; want it still parked", got, err)
	}
	select { // idle from now on, for five times the bound
	case <-time.After(5 * idle):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer tok-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the session's id after it was idle past the bound: %d, want 404", resp.StatusCode)
	}
}

// TestWaitingCallKeepsItsSession: a call waiting for an answer is use of
// its session, however long it waits past SessionIdle while its client is
// connected; the answer reaches it, and the session serves on.
func TestWaitingCallKeepsItsSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	const idle = 200 * time.Millisecond
	hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, mcp.Options{SessionIdle: idle, WaitSlice: 20 * time.Millisecond, Caller: agentOf})))
	t.Cleanup(hs.Close) // after the session's own cleanup
	cs, _ := aliceOn(t, ctx, hs.URL, nil)
	out := callOn(ctx, cs, &mcpsdk.CallToolParams{Name: mcp.ToolClarification,
		Arguments: map[string]any{"question": "Which region?", "reversibility": "hard_to_reverse"}})
	q := waitParked(t, ctx, svc)
	select { // the call waits five times the bound
	case <-time.After(5 * idle):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	resumed(t, result(t, ctx, out), q.ID, fence.VerbAnswered)
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("the session after its call: %v", err)
	}
}
