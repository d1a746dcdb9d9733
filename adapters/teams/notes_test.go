package teams_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestThrottledPrivateNoteIsSent: Teams throttles the call that opens
// the personal chat a refused clicker is told in; the note waits out the
// Retry-After (the test's pause, which passes no real second) and goes.
// Before, it was dropped on the 429, and a click that counted for
// nothing said nothing either.
func TestThrottledPrivateNoteIsSent(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var paused []time.Duration
	e.a.SetSleep(func(_ context.Context, d time.Duration) bool {
		mu.Lock()
		defer mu.Unlock()
		paused = append(paused, d)
		return true
	})
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	m := e.card(q.ID, nil)
	data := action(t, m, card.LabelDeny)
	data[data[teams.DataInput].(string)] = "not on a Friday"
	e.fake.FailNext(http.StatusTooManyRequests) // the personal chat's creation
	if status, _, err := e.fake.Deliver(e.fake.SubmitActivity(mallory, m, data), ""); err != nil || status != http.StatusOK {
		t.Fatalf("submit: %d %v", status, err)
	}
	if !e.toldPrivately(mallory, "not") {
		t.Fatalf("the refused clicker was not told after Teams throttled the note: %+v", e.fake.Messages())
	}
	if e.get(q.ID).State != core.StateOpen {
		t.Fatal("a stranger's submit counted")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paused) != 1 || paused[0] != time.Second {
		t.Errorf("the note paused %v; want once, the Retry-After's 1s", paused)
	}
}
