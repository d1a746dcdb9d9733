package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/rs/zerolog"
)

// awayAtStart is a Telegram that cannot be reached until up: getMe fails
// as a refused connection does, and once up it answers, and sendMessage
// posts. It answers in process, so the test runs in a synctest bubble.
type awayAtStart struct {
	up     time.Time
	once   sync.Once
	posted chan struct{}
}

func (tg *awayAtStart) RoundTrip(r *http.Request) (*http.Response, error) {
	var body string
	switch method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]; {
	case time.Now().Before(tg.up):
		return nil, errors.New("dial tcp: connect: connection refused")
	case method == "getMe":
		body = `{"ok":true,"result":{"id":42,"is_bot":true,"first_name":"Ask","username":"askbot"}}`
	case method == "sendMessage":
		tg.once.Do(func() { close(tg.posted) })
		body = fmt.Sprintf(`{"ok":true,"result":{"message_id":7,"date":1,"chat":{"id":%d,"type":"supergroup"}}}`, room)
	default:
		body = `{"ok":true,"result":true}`
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// heardDeliveries is a core.Observer that keeps what it is told of
// delivery attempts.
type heardDeliveries struct {
	mu      sync.Mutex
	results []string
	waits   []time.Duration
}

var _ core.Observer = (*heardDeliveries)(nil)

func (h *heardDeliveries) Delivered(_ core.Surface, result string, retryAfter time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.results = append(h.results, result)
	h.waits = append(h.waits, retryAfter)
}

func (*heardDeliveries) Asked(*core.Question)           {}
func (*heardDeliveries) Resolved(string, time.Duration) {}
func (*heardDeliveries) Closed(*core.Question)          {}
func (*heardDeliveries) Refused(string, string)         {}
func (*heardDeliveries) Unrecorded(core.EventKind)      {}
func (*heardDeliveries) Parked(int)                     {}
func (*heardDeliveries) Woke(time.Duration)             {}

// TestCardWaitsForGetMeAsNotReady: a card asked while Telegram cannot be
// reached at start waits, for far longer than eight attempts' back-off,
// and is posted once getMe answers (README: its cards follow once it
// answers); and its waits are counted as retried, not rate limited, with
// no platform wait, for Telegram asked for none. Before, each was a
// core.RetryAfter of 1 s: the metrics counted every one as rate_limited
// with a platform_retry_after_seconds Telegram never named.
//
// It runs in a synctest bubble, so the fifteen minutes pass on the
// bubble's clock, at once.
func TestCardWaitsForGetMeAsNotReady(t *testing.T) {
	synctest.Test(t, cardWaitsForGetMeAsNotReady)
}

func cardWaitsForGetMeAsNotReady(t *testing.T) {
	const away = 15 * time.Minute
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(room, 10)}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
	}}})
	heard := &heardDeliveries{}
	svc.SetObserver(heard)
	tg := &awayAtStart{up: time.Now().Add(away), posted: make(chan struct{})}
	a, err := New(svc, Options{Token: token, APIEndpoint: "http://telegram.test/bot%s/%s", HTTPClient: &http.Client{Transport: tg},
		WebhookSecret: secret, WebhookURL: "https://bridge.example/telegram/webhook", Limits: fastLimits, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.hello(ctx) })
	wg.Go(func() { _ = loops.Deliver(ctx, svc, a, loops.DeliverOptions{Consumer: "c1", Block: time.Second}) })
	in := decisionInput()
	in.Route, in.Agent, in.RunID, in.Reversibility = "ops", "deploy-bot", "run-1", core.HardToReverse
	q, err := svc.Ask(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-tg.posted:
	case <-time.After(away + time.Hour):
		t.Error("the card was never posted once Telegram answered")
	}
	stop()
	wg.Wait()

	heard.mu.Lock()
	defer heard.mu.Unlock()
	retried := 0
	for i, r := range heard.results {
		if r == core.DeliveryRateLimited || heard.waits[i] != 0 {
			t.Fatalf("attempt %d before getMe answered was counted %q with a platform wait of %v; want retried, with none", i+1, r, heard.waits[i])
		}
		if r == core.DeliveryRetried {
			retried++
		}
	}
	if retried <= 8 {
		t.Errorf("the card waited %d times; want more than eight attempts' worth over %v", retried, away)
	}
	if n := len(heard.results); n == 0 || heard.results[n-1] != core.DeliverySent {
		t.Errorf("attempts counted %q; want the last %q", heard.results, core.DeliverySent)
	}
	for _, e := range coretest.EventsOf(t, svc, q.ID) {
		if e.Kind == core.EventUndelivered {
			t.Fatalf("a card waiting for getMe was given up: %+v", e)
		}
	}
	now, err := svc.Get(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(now.Messages) != 1 || now.Messages[0].ID != "7" || now.Messages[0].Repeat {
		t.Fatalf("recorded cards %+v; want the one posted, not flagged as a possible repeat", now.Messages)
	}
}
