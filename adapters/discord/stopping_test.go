package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// heldDedupe is the store with the dedupe of gateway interactions held
// until release: entered hears that one has begun.
type heldDedupe struct {
	core.Store
	entered chan struct{}
	release chan struct{}
}

func (h *heldDedupe) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if strings.Contains(key, "discord:interaction:") {
		select {
		case h.entered <- struct{}{}:
		default:
		}
		<-h.release
	}
	return h.Store.Once(ctx, key, ttl)
}

// TestGatewayClickInHandWhenRunStops: a click the gateway handed over is
// seen through when Run stops meanwhile (a rolling deploy, the program
// shutting down): its answer is recorded and the clicker is answered, on
// a budget of its own, and Run returns only once it is, so the program
// does not close the store under it. Before, the click was marked seen
// and then dropped (its handler gave up on Run's ended context), so
// Discord showed "This interaction failed", nothing was recorded, and a
// click sent again was another interaction to be answered by whichever
// replica held the gateway next, if the clicker thought to send one.
func TestGatewayClickInHandWhenRunStops(t *testing.T) {
	held := &heldDedupe{entered: make(chan struct{}, 1), release: make(chan struct{})}
	r := newRig(t, rigOptions{gateway: true, wrap: func(st core.Store) core.Store { held.Store = st; return held }})
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	click := r.fake.Click(alice, card.ID, r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}).CustomID)
	if err := r.fake.Dispatch(click); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the click never reached its dedupe")
	}
	ran := r.stopRun()
	close(held.release)
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after it was stopped")
	}
	// Run has returned: whatever it waited for is done, nothing later.
	if n := len(r.fake.Responses(click.ID)); n != 1 {
		t.Errorf("the click was answered %d times by the time Run returned; want once", n)
	}
	if got := r.question(q.ID); got.State != core.StateAnswered || got.Resolution.OptionID != "ddb" {
		t.Errorf("the click in hand when Run stopped: %s, %+v", got.State, got.Resolution)
	}
}
