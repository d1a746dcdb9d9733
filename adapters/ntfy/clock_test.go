package ntfy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// start is where the service's clock of clocked starts.
var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// clocked is the adapter on a service whose clock moves only when told,
// with no clock of the adapter's own: the service's is what it reads.
func clocked(t *testing.T, serverURL string) (*core.SimClock, *core.Service, *ntfy.Adapter) {
	t.Helper()
	clock := core.NewSimClock(start)
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceNtfy, ID: topic}},
		Deciders: map[core.Surface][]string{core.SurfaceNtfy: {topic}, core.SurfaceAPI: {"*"}},
	}}})
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	a, err := ntfy.New(svc, ntfy.Options{ServerURL: serverURL, Token: token, PublicURL: web.URL, Key: []byte(key), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a.Mount(mux)
	return clock, svc, a
}

func askOn(t *testing.T, svc *core.Service) *core.Question {
	t.Helper()
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE t"}`), Route: "ops", Agent: "deploy-bot", RunID: "run-1", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestRefusedTapsArePacedByTheServicesClock: the notifications telling
// refused taps why are paced (one per topic in five seconds) by the
// service's clock, so the pace follows the clock the rest of the bridge
// keeps, and is tested without waiting. Before, the wall clock paced
// them: five seconds on the service's clock let no second one through.
func TestRefusedTapsArePacedByTheServicesClock(t *testing.T) {
	fake := ntfyfake.Start(t, token)
	clock, svc, a := clocked(t, fake.URL)
	q := askOn(t, svc)
	if _, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost, Delivery: "d1"}); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages(topic)[0]
	if _, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, OptionID: core.DenyOption}); err != nil {
		t.Fatal(err)
	}
	tap := func(want int) {
		t.Helper()
		if status, _ := ntfyfake.Tap(t, m, card.LabelApprove); status != http.StatusConflict {
			t.Fatalf("a late tap: %d", status)
		}
		if n := len(fake.Messages(topic)) - 1; n != want {
			t.Fatalf("%d notifications of refused taps, want %d", n, want)
		}
	}
	tap(1)
	clock.Advance(4 * time.Second)
	tap(1) // within five seconds of the last: the tapper sees the status alone
	clock.Advance(2 * time.Second)
	tap(2)
}

// TestARetryAfterDateIsReadByTheServicesClock: a 429 naming the date to
// come back at waits from the service's clock to then, the clock the
// outbox keeps the wait by. Before, it was read against the wall clock.
func TestARetryAfterDateIsReadByTheServicesClock(t *testing.T) {
	at := start.Add(2 * time.Minute)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", at.Format(http.TimeFormat))
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	_, svc, a := clocked(t, srv.URL)
	q := askOn(t, svc)
	_, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost, Delivery: "d1"})
	var ra *core.RetryAfter
	if !errors.As(err, &ra) {
		t.Fatalf("a 429: %v (%T), not a wait", err, err)
	}
	if ra.After != 2*time.Minute {
		t.Fatalf("a 429 naming a date two minutes ahead of the service's clock waits %v", ra.After)
	}
}
