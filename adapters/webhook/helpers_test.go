package webhook_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// stores opens each store the bridge runs on, fresh per test.
var stores = coretest.Stores

// The secret the test signs with, and the agent's API token.
const (
	secret     = "webhook secret for the tests"
	agentToken = "agent-token-0123456789"
)

// received is one request the receiver got.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a webhook endpoint as a workflow engine would run one: it
// answers each request with the next step of its script (the last one for
// ever after), checks signatures with the README's check (not the
// adapter's), and processes each event id it accepts once, dropping
// repeats.
type receiver struct {
	srv    *httptest.Server
	script []func(w http.ResponseWriter)

	mu        sync.Mutex
	got       []received
	accepted  map[string]int // event id -> requests answered 2xx
	processed []string       // event ids processed, each once
	bad       []string       // why a request failed verification
	arrived   chan struct{}
}

func newReceiver(t *testing.T, script ...func(w http.ResponseWriter)) *receiver {
	r := &receiver{script: script, accepted: map[string]int{}, arrived: make(chan struct{}, 64)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func status(code int) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { w.WriteHeader(code) }
}

func retryAfter(code int, value string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", value)
		w.WriteHeader(code)
	}
}

// url is the receiver's URL under which callbacks are allowed.
func (r *receiver) url() string { return r.srv.URL + "/hooks/" }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	n := len(r.got)
	// The wall clock, as the store's due times are on (they outlive the
	// process, so they keep no monotonic reading): a retry due 1 s after
	// a 429 is 1 s after it on that clock, which a correction of the wall
	// clock meanwhile moves against the monotonic one (CI once saw a
	// retry 997 ms after its 429 on the monotonic clock).
	r.got = append(r.got, received{header: req.Header.Clone(), body: body, at: time.Now().Round(0)})
	ok := r.verify(req, body)
	step := r.script[min(n, len(r.script)-1)]
	r.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
	} else {
		rec := httptest.NewRecorder()
		step(rec)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if rec.Code/100 == 2 {
			id := req.Header.Get(webhook.HeaderID)
			r.mu.Lock()
			if r.accepted[id]++; r.accepted[id] == 1 {
				r.processed = append(r.processed, id)
			}
			r.mu.Unlock()
		}
		w.WriteHeader(rec.Code)
	}
	select {
	case r.arrived <- struct{}{}:
	default: // a full buffer already wakes await
	}
}

// verify checks a request with the README's Go check (verify,
// readme_test.go), not the adapter's code, at the callback URL the
// request was sent to: the receiver's own, as an ask named it.
func (r *receiver) verify(req *http.Request, body []byte) bool {
	h := req.Header
	if !verify([]byte(secret), r.srv.URL+req.URL.RequestURI(), h, body) {
		r.bad = append(r.bad, "timestamp "+h.Get("Askbridge-Webhook-Timestamp")+", signature "+h.Get("Askbridge-Webhook-Signature"))
		return false
	}
	return true
}

// outcome is what the receiver accepted and processed.
func (r *receiver) outcome() (accepted map[string]int, processed []string, bad []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.accepted), slices.Clone(r.processed), slices.Clone(r.bad)
}

// requests is what the receiver got so far.
func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// await waits for the receiver's nth request (from 1).
func (r *receiver) await(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for len(r.requests()) < n {
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("the receiver got %d requests, waiting for %d", len(r.requests()), n)
		}
	}
}

// rig is a bridge: core over a store, the API on a test server, and the
// receiver's URL allowed for callbacks.
type rig struct {
	st    core.Store
	svc   *core.Service
	api   *httptest.Server
	agent *client.Client
	recv  *receiver
	clock core.Clock
}

func newRig(t *testing.T, st core.Store, recv *receiver, clock core.Clock) *rig {
	r := &rig{st: st, recv: recv, clock: clock}
	r.svc = r.service(t, st)
	api, err := httpapi.New(r.svc, httpapi.Options{Log: zerolog.Nop(), Tokens: []httpapi.Token{
		{Name: "agent-a", Secret: agentToken, Role: httpapi.RoleAgent},
		{Name: "op", Secret: "operator-token-0123456789", Role: httpapi.RoleOperator},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r.api = httptest.NewServer(api)
	t.Cleanup(r.api.Close)
	r.agent = client.New(r.api.URL, agentToken)
	return r
}

// service is a core over st with the rig's clock and allow list, as a
// replica of the bridge would have.
func (r *rig) service(t *testing.T, st core.Store) *core.Service {
	svc := coretest.Service(t, st, coretest.Options{Clock: r.clock, Callbacks: core.CallbackPrefixes{r.recv.url()}})
	return svc
}

// sender is a Sender signing with the test secret, over hc.
func (r *rig) sender(t *testing.T, hc *http.Client) *webhook.Sender {
	s, err := webhook.New(webhook.Options{Client: hc, Allow: core.CallbackPrefixes{r.recv.url()}, Body: httpapi.WaitBody,
		Keys: &webhook.Keys{Default: []byte(secret)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ask parks a clarification through the API with a callback URL.
func (r *rig) ask(t *testing.T, callback string) core.QuestionID {
	q, err := r.agent.Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Which region?",
		Reversibility: core.Reversible, RunID: "run-1", ToolCallID: "call-1", CallbackURL: callback})
	if err != nil {
		t.Fatal(err)
	}
	return q.ID
}

// answer closes question id through the API, as an operator.
func (r *rig) answer(t *testing.T, id core.QuestionID) {
	op := client.New(r.api.URL, "operator-token-0123456789")
	if _, err := op.Answer(t.Context(), id, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
}

// waitBody is what the API's wait returns for question id, byte for byte.
func (r *rig) waitBody(t *testing.T, id core.QuestionID) []byte {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, r.api.URL+"/v1/questions/"+string(id)+"/wait?timeout=0", nil)
	req.Header.Set("Authorization", "Bearer "+agentToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("wait: %d %s", resp.StatusCode, b)
	}
	return b
}

// drain runs the webhook outbox through s as consumer until the test ends
// or stop is called; errs hears each failed attempt.
func drain(t *testing.T, svc *core.Service, s core.Caller, o loops.DeliverOptions) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if o.Block == 0 {
		o.Block = 20 * time.Millisecond
	}
	if o.RetryWait == 0 {
		o.RetryWait = 10 * time.Millisecond
	}
	go func() {
		defer close(done)
		_ = loops.DeliverCalls(ctx, svc, s, o)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// reporting is a Caller that reports each attempt's result.
type reporting struct {
	core.Caller
	results chan error
}

func (r reporting) Call(ctx context.Context, q *core.Question, d core.Delivery) error {
	err := r.Caller.Call(ctx, q, d)
	r.results <- err
	return err
}

// crashingStore is the store as one replica reaches it, until the
// replica dies: from then on every call of the outbox fails, as the
// calls of a process that is gone would never arrive. It stands in for
// no store: until the crash every call is the real store's.
type crashingStore struct {
	core.Store
	dead atomic.Bool
	died chan struct{} // closed at the crash
	once sync.Once
}

func newCrashingStore(st core.Store) *crashingStore {
	return &crashingStore{Store: st, died: make(chan struct{})}
}

// crash kills the replica.
func (s *crashingStore) crash() {
	s.once.Do(func() { s.dead.Store(true); close(s.died) })
}

var errDead = errors.New("the replica has died")

func (s *crashingStore) Claim(ctx context.Context, sf core.Surface, consumer string, max int, minIdle, block time.Duration) ([]core.Delivery, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	return s.Store.Claim(ctx, sf, consumer, max, minIdle, block)
}

func (s *crashingStore) Ack(ctx context.Context, sf core.Surface, id string) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Ack(ctx, sf, id)
}

func (s *crashingStore) Retry(ctx context.Context, d core.Delivery, consumer string, after time.Duration) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Retry(ctx, d, consumer, after)
}

func (s *crashingStore) Extend(ctx context.Context, sf core.Surface, consumer string, ids []string) ([]string, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	return s.Store.Extend(ctx, sf, consumer, ids)
}

func (s *crashingStore) Leave(ctx context.Context, sf core.Surface, consumer string, idle time.Duration) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Leave(ctx, sf, consumer, idle)
}

// dyingTransport carries one request, then kills the replica before its
// answer is back: the receiver has the webhook, the outbox never hears.
type dyingTransport struct{ store *crashingStore }

func (d dyingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	d.store.crash()
	return resp, err
}
