package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("DelayedWebhookOfACommit", testLaterCommitWebhook)
}

// testLaterCommitWebhook: a delivery kept whole (a close's webhook)
// delayed in a Commit waits its delay like a card's update, and is then
// handed out whole, as an Enqueue would have put it. No caller delays a
// webhook today; the store promises it for any delivery.
func testLaterCommitWebhook(t *testing.T, h Harness) {
	e := newClockedEnv(t, h)
	q := e.askWithCards(decision("ops"))
	cur := e.get(q.ID)
	cur.CallbackURL = "https://hooks.example.test/askbridge"
	c, err := core.Next(cur, core.Transition{QuestionID: q.ID, Now: e.clock.Now(),
		Resolution: &core.Resolution{State: core.StateAnswered, OptionID: "pg", Decider: apiDecider("op")}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range c.Updates {
		if c.Updates[i].Surface == core.SurfaceWebhook {
			c.Updates[i].Delay = 2 * time.Second
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the close enqueues %d webhooks: %+v", n, c.Updates)
	}
	if _, err := e.store.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	e.claimed(core.SurfaceWebhook)
	e.clock.Advance(2 * time.Second)
	ds := e.claimed(core.SurfaceWebhook, core.WebhookKey(q.ID))
	if d := ds[0]; d.Kind != core.DeliverWebhook || d.QuestionID != q.ID || d.Room != cur.CallbackURL || !d.CreatedAt.Equal(c.Now) {
		t.Fatalf("the delayed webhook as claimed: %+v", d)
	}
}
