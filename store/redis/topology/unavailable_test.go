package topology_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

const agentToken = "agent-token-0123456789"

// api serves the HTTP API on st, and signals on refused each 503 it
// answers.
func api(t *testing.T, st core.Store, refused chan<- struct{}) *httptest.Server {
	t.Helper()
	return apiOn(t, coretest.Service(t, st, coretest.Options{}), refused)
}

func apiOn(t *testing.T, svc *core.Service, refused chan<- struct{}) *httptest.Server {
	t.Helper()
	h, err := httpapi.New(svc, httpapi.Options{Tokens: []httpapi.Token{{Name: "agent-a", Secret: agentToken, Role: httpapi.RoleAgent}},
		Unavailable: redisstore.Unavailable})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &status{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.code == http.StatusServiceUnavailable && refused != nil {
			select {
			case refused <- struct{}{}:
			default:
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

type status struct {
	http.ResponseWriter
	code int
}

func (s *status) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// TestDemotedPrimaryAnswers503 turns the server a store writes to into a
// replica, as Sentinel does to a primary that comes back after a
// failover: every write is refused (READONLY). The API answers a
// retryable 503 with Retry-After, never a 500; /readyz says a failover
// is under way; the Go client's Ask rides it out, and the question is
// parked once the server takes writes again.
func TestDemotedPrimaryAnswers503(t *testing.T) {
	t.Parallel()
	primary, other := redistest.Start(t), redistest.Start(t)
	st, err := redisstore.Connect(t.Context(), redisstore.Dial{Topology: redisstore.Single, URL: primary.URL()}, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	refused := make(chan struct{}, 1)
	srv := api(t, st, refused)
	host, port, _ := strings.Cut(other.Addr(), ":")
	if _, err := primary.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}

	ask := `{"kind":"clarification","question":"Which region?","reversibility":"hard_to_reverse","run_id":"run-1","tool_call_id":"call-1"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/questions", strings.NewReader(ask))
	req.Header.Set("Authorization", "Bearer "+agentToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body client.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || body.Error.Code != core.CodeUnavailable {
		t.Fatalf("ask on a demoted primary: %d, Retry-After %q, %+v; want 503, 1, unavailable", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	<-refused // that one

	resp, err = http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body = client.ErrorBody{}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body.Error.Message, "answers as a replica: a failover is under way") {
		t.Fatalf("readyz on a demoted primary: %d %+v", resp.StatusCode, body)
	}
	<-refused

	c := client.New(srv.URL, agentToken)
	asked := make(chan error, 1)
	go func() {
		_, err := c.Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
			Reversibility: core.HardToReverse, RunID: "run-1", ToolCallID: "call-2"})
		asked <- err
	}()
	<-refused // the client was refused once, and will try again
	if _, err := primary.Do("REPLICAOF", "NO", "ONE"); err != nil {
		t.Fatal(err)
	}
	if err := <-asked; err != nil {
		t.Fatalf("the client's ask did not ride out the failover: %v", err)
	}
	if resp, err := http.Get(srv.URL + "/readyz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz once the server is a primary again: %v %v", resp, err)
	}
}

// TestDeadServerAnswers503 kills the only server under a parked wait:
// the wait, woken by the lost subscription, answers a 503 with
// Retry-After (never a 500, never a hang until its timeout), as does
// every read after it.
func TestDeadServerAnswers503(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	st, err := redisstore.Connect(t.Context(), redisstore.Dial{Topology: redisstore.Single, URL: s.URL()}, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := coretest.Service(t, st, coretest.Options{})
	parked := &parkings{ch: make(chan int, 16)}
	svc.SetObserver(parked)
	srv := apiOn(t, svc, nil)
	c := client.New(srv.URL, agentToken)
	q, err := c.Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.HardToReverse, RunID: "run-1", ToolCallID: "call-1"})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := c.WaitOnce(t.Context(), q.ID, time.Minute)
		waited <- err
	}()
	for n := range parked.ch {
		if n == 1 {
			break
		}
	}
	s.Close()
	for _, err := range []error{<-waited, func() error { _, err := c.WaitOnce(t.Context(), q.ID, 0); return err }()} {
		var e *client.Error
		if !errors.As(err, &e) || !e.Unavailable() || e.RetryAfter <= 0 {
			t.Fatalf("a wait with the server dead: %v, want a 503 unavailable with Retry-After", err)
		}
	}
}

// parkings is an observer that hands on the number of parked waiters.
type parkings struct {
	nopObserver
	mu sync.Mutex
	n  int
	ch chan int
}

func (p *parkings) Parked(d int) {
	p.mu.Lock()
	p.n += d
	n := p.n
	p.mu.Unlock()
	select {
	case p.ch <- n:
	default:
	}
}

type nopObserver struct{}

func (nopObserver) Asked(*core.Question)                          {}
func (nopObserver) Refused(string, string)                        {}
func (nopObserver) Resolved(string, time.Duration)                {}
func (nopObserver) Closed(*core.Question)                         {}
func (nopObserver) Delivered(core.Surface, string, time.Duration) {}
func (nopObserver) Woke(time.Duration)                            {}
func (nopObserver) Unrecorded(core.EventKind)                     {}

// TestReadyWhereRoleIsRefused: a server whose ACL refuses ROLE (as some
// managed services do) is ready as long as it answers.
func TestReadyWhereRoleIsRefused(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	st, err := redisstore.Connect(t.Context(), redisstore.Dial{Topology: redisstore.Single, URL: s.URL()}, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, err := s.Do("ACL", "SETUSER", "default", "-role"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do("ROLE"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("ROLE is not refused: %v", err)
	}
	if err := st.Ping(t.Context()); err != nil {
		t.Fatalf("ping where ROLE is refused: %v", err)
	}
	s.Close()
	if err := st.Ping(t.Context()); !core.Unavailable(err) {
		t.Fatalf("ping with the server gone: %v, want it marked unavailable", err)
	}
}
