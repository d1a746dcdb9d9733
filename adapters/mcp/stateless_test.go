package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

// current is the revision without protocol sessions.
var current = &mcpsdk.ClientSessionOptions{ProtocolVersion: "2026-07-28"}

// replicas are several HTTP handlers over one store, each as its own
// server, as several askbridge processes behind a load balancer are.
type replicas struct {
	urls []*url.URL
}

func newReplicas(t *testing.T, svc *core.Service, n int, opts mcp.Options) *replicas {
	t.Helper()
	r := &replicas{}
	for range n {
		hs := httptest.NewServer(authenticate(mcp.HTTPHandler(mcp.ServiceBackend{Svc: svc}, opts)))
		t.Cleanup(hs.Close)
		u, _ := url.Parse(hs.URL)
		r.urls = append(r.urls, u)
	}
	return r
}

// exchange is one HTTP request a client sent, as a replica saw it.
type exchange struct {
	replica int
	method  string // the JSON-RPC method, from the Mcp-Method header
	session string // the Mcp-Session-Id the request carried
	status  int
	setID   string // the Mcp-Session-Id the response set
}

// balancer sends each request to the next replica in turn, as a load
// balancer without affinity does, and records what went where.
type balancer struct {
	r     *replicas
	token string

	mu   sync.Mutex
	next int
	log  []exchange
}

func (b *balancer) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	i := b.next % len(b.r.urls)
	b.next++
	b.mu.Unlock()
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = b.r.urls[i].Scheme, b.r.urls[i].Host, ""
	req.Header.Set("Authorization", "Bearer "+b.token)
	res, err := http.DefaultTransport.RoundTrip(req)
	ex := exchange{replica: i, method: req.Header.Get("Mcp-Method"), session: req.Header.Get("Mcp-Session-Id")}
	if err == nil {
		ex.status, ex.setID = res.StatusCode, res.Header.Get("Mcp-Session-Id")
	}
	b.mu.Lock()
	b.log = append(b.log, ex)
	b.mu.Unlock()
	return res, err
}

func (b *balancer) exchanges() []exchange {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]exchange(nil), b.log...)
}

// connect opens a client through the balancer at the given revision.
func (b *balancer) connect(t *testing.T, ctx context.Context, copts *mcpsdk.ClientOptions, version *mcpsdk.ClientSessionOptions) *mcpsdk.ClientSession {
	t.Helper()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-client", Version: "1"}, copts).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: b.r.urls[0].String(), HTTPClient: &http.Client{Transport: b}, MaxRetries: -1}, version)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestStatelessAcrossReplicas: a 2026-07-28 client needs no session, so
// a balancer may send each of its requests to another replica: it
// discovers the server on one, lists the tools on the next, and its call
// waits on a third while the answer comes from elsewhere. No request
// carries a session id and no response sets one.
func TestStatelessAcrossReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	r := newReplicas(t, svc, 3, mcp.Options{WaitSlice: 20 * time.Millisecond, Version: "test", Caller: agentOf})
	b := &balancer{r: r, token: "tok-alice"}
	copts, progress := progressRecorder()
	cs := b.connect(t, ctx, copts, current)
	if v := cs.InitializeResult(); v == nil || v.ProtocolVersion != "2026-07-28" {
		t.Fatalf("negotiated %+v, want 2026-07-28", v)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	params := &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "reversible",
	}}
	params.SetProgressToken("stateless-tok")
	out := callOn(ctx, cs, params)
	q := waitParked(t, ctx, svc)
	if q.Agent != "alice" {
		t.Errorf("asked by %q, want alice", q.Agent)
	}
	awaitProgress(t, ctx, progress, "stateless-tok", q.ID)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	resumed(t, result(t, ctx, out), q.ID, fence.VerbAnswered)

	seen := map[int]bool{}
	for _, ex := range b.exchanges() {
		seen[ex.replica] = true
		if ex.session != "" || ex.setID != "" {
			t.Errorf("%s on replica %d: session %q, set %q; want none", ex.method, ex.replica, ex.session, ex.setID)
		}
		if ex.status != http.StatusOK {
			t.Errorf("%s on replica %d: HTTP %d", ex.method, ex.replica, ex.status)
		}
	}
	if len(seen) != 3 {
		t.Errorf("requests reached replicas %v, want all three", seen)
	}
}

// TestLegacyClientKeepsItsSession: on the same path, a 2025-11-25 client
// opens a session as before, and is served for as long as it reaches the
// replica that holds it; another replica does not know it (the reason
// such clients still need affinity).
func TestLegacyClientKeepsItsSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	r := newReplicas(t, svc, 2, mcp.Options{Caller: agentOf})
	sticky := &balancer{r: &replicas{urls: r.urls[:1]}, token: "tok-alice"}
	cs := sticky.connect(t, ctx, nil, legacy)
	if v := cs.InitializeResult(); v == nil || v.ProtocolVersion != "2025-11-25" {
		t.Fatalf("negotiated %+v, want 2025-11-25", v)
	}
	if cs.ID() == "" {
		t.Fatal("a 2025-11-25 client got no session")
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, ex := range sticky.exchanges() {
		if ex.method == "tools/list" && ex.session != cs.ID() {
			t.Errorf("tools/list carried session %q, want %q", ex.session, cs.ID())
		}
	}
	// The session lives in the replica that opened it.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.urls[1].String(),
		stringsReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer tok-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the session on another replica: HTTP %d, want 404", res.StatusCode)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// TestStatelessRetryOnAnotherReplicaParksOnce: a 2026-07-28 call naming
// its tool call but no run, sent again (its reply lost) and balanced to
// another replica, is the same call: it waits on the question the first
// parked, and people are asked once. Before, each replica bound such a
// call to a run of its own, so the retry was another tool call in
// another run, and parked a second question. So it is for an agent
// whose name leaves no room for the run's "mcp-" (an id's limit is 128
// bytes): its run is named by a digest of the name.
func TestStatelessRetryOnAnotherReplicaParksOnce(t *testing.T) {
	long := core.AgentID(strings.Repeat("a", core.MaxIDLen-2))
	for name, caller := range map[string]func(*http.Request) core.AgentID{
		"alice":       agentOf,
		"a long name": func(*http.Request) core.AgentID { return long },
	} {
		t.Run(name, func(t *testing.T) { retryOnAnotherReplica(t, caller) })
	}
}

func retryOnAnotherReplica(t *testing.T, caller func(*http.Request) core.AgentID) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := newService(t)
	r := newReplicas(t, svc, 2, mcp.Options{WaitSlice: 20 * time.Millisecond, Caller: caller})
	b := &balancer{r: r, token: "tok-alice"}
	cs := b.connect(t, ctx, nil, current)
	params := &mcpsdk.CallToolParams{Name: mcp.ToolClarification, Arguments: map[string]any{
		"question": "Which region?", "reversibility": "reversible", "tool_call_id": "toolu_01",
	}}
	first := callOn(ctx, cs, params)
	q := waitParked(t, ctx, svc)
	second := callOn(ctx, cs, params)
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: operator, Text: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	resumed(t, result(t, ctx, first), q.ID, fence.VerbAnswered)
	wait, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	resumed(t, result(t, wait, second), q.ID, fence.VerbAnswered)
	if open, _, err := svc.ListOpen(ctx, "", 10); err != nil || len(open) != 0 {
		t.Fatalf("open after the retry: %d, %v; want none", len(open), err)
	}
	replicas := map[int]bool{}
	for _, ex := range b.exchanges() {
		if ex.method == "tools/call" {
			replicas[ex.replica] = true
		}
	}
	if len(replicas) != 2 {
		t.Fatalf("the two calls reached replicas %v, want both", replicas)
	}
}

// TestMismatchedVersionIsToldSo: a request whose _meta says it speaks
// 2026-07-28 while its version header names 2025-11-25, or (a batch) has
// no header at all, is refused for what is wrong with it: the header
// does not match, or is missing (-32020). Before, such a request went to
// the handler of sessions, which answered -32022 "protocol version
// 2025-11-25 is not supported by this server" (or 2025-03-26, the
// revision it assumes without a header) while listing that same version
// among those it supports.
func TestMismatchedVersionIsToldSo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := newReplicas(t, newService(t), 1, mcp.Options{Caller: agentOf})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`
	for _, c := range []struct{ name, header, body string }{
		{"an earlier revision in the header", "2025-11-25", list},
		{"a batch without the header", "", "[" + list + "]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.urls[0].String(), stringsReader(c.body))
			req.Header.Set("Authorization", "Bearer tok-alice")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Method", "tools/list")
			if c.header != "" {
				req.Header.Set("Mcp-Protocol-Version", c.header)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var m struct{ Error *rpcError }
			if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
				t.Fatalf("HTTP %d: %v", res.StatusCode, err)
			}
			if m.Error == nil || m.Error.Code != -32020 || !strings.Contains(m.Error.Message, "Mcp-Protocol-Version") {
				t.Errorf("refused with %+v (%s), want -32020 naming the header", m.Error, dataOf(m.Error))
			}
		})
	}
}
