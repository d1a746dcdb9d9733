package ntfy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// start is where the service's clock of clocked starts.
var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// clocked is an env (on server, "" for its own fake) whose service's
// clock moves only when told, and an approval asked on it. The adapter
// is given no clock of its own: the service's is what it reads.
func clocked(t *testing.T, server string) (*env, *core.SimClock, *core.Question) {
	t.Helper()
	clock := core.NewSimClock(start)
	e := newEnvWith(t, envOptions{token: token, clock: clock, server: server})
	return e, clock, e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
}

// lateTaps is a clocked env whose approval was published to topic and
// then denied, and tap, which taps the notification's Approve (refused,
// the question closed) and wants want notifications of refused taps on
// the topic after it.
func lateTaps(t *testing.T) (*env, *core.SimClock, func(want int)) {
	t.Helper()
	e, clock, q := clocked(t, "")
	if _, err := e.a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost, Delivery: "d1"}); err != nil {
		t.Fatal(err)
	}
	m := e.fake.Messages(topic)[0]
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, OptionID: core.DenyOption}); err != nil {
		t.Fatal(err)
	}
	return e, clock, func(want int) {
		t.Helper()
		if status, _ := ntfyfake.Tap(t, m, card.LabelApprove); status != http.StatusConflict {
			t.Fatalf("a late tap: %d", status)
		}
		if n := len(e.fake.Messages(topic)) - 1; n != want {
			t.Fatalf("%d notifications of refused taps, want %d", n, want)
		}
	}
}

// TestRefusedTapsArePacedByTheServicesClock: the notifications telling
// refused taps why are paced (one per topic in five seconds) by the
// service's clock, so the pace follows the clock the rest of the bridge
// keeps, and is tested without waiting. Before, the wall clock paced
// them: five seconds on the service's clock let no second one through.
func TestRefusedTapsArePacedByTheServicesClock(t *testing.T) {
	_, clock, tap := lateTaps(t)
	tap(1)
	clock.Advance(4 * time.Second)
	tap(1) // within five seconds of the last: the tapper sees the status alone
	clock.Advance(2 * time.Second)
	tap(2)
}

// TestAnUnpublishedTapNoteHoldsOffNone: a refused tap's notification
// that ntfy did not take (a 429 here) counts for nothing, so the next
// refused tap, at once, is told; the one that went out then paces the
// rest. Before, the topic counted as told before the publish, and the
// next tap within five seconds was told nothing, though nobody had been.
func TestAnUnpublishedTapNoteHoldsOffNone(t *testing.T) {
	e, clock, tap := lateTaps(t)
	e.fake.Limit(1)
	tap(0) // its notification refused by ntfy
	tap(1) // at the same instant on the service's clock
	clock.Advance(4 * time.Second)
	tap(1)
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
	e, _, q := clocked(t, srv.URL)
	_, err := e.a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost, Delivery: "d1"})
	var ra *core.RetryAfter
	if !errors.As(err, &ra) {
		t.Fatalf("a 429: %v (%T), not a wait", err, err)
	}
	if ra.After != 2*time.Minute {
		t.Fatalf("a 429 naming a date two minutes ahead of the service's clock waits %v", ra.After)
	}
}
