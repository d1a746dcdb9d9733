package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

func init() {
	register("BudgetUntilSpendsNothing", testUntil)
	register("HandedBackSpendsNothing", testHandedBackSpendsNothing)
}

// testUntil: Until says how long until a budget has a send and takes
// none: asked any number of times it leaves the send to Spend, and after
// the send it says about as long as Spend would.
func testUntil(t *testing.T, h Harness) {
	e := newEnv(t, h)
	b := e.store.(core.Budget)
	ctx := t.Context()
	l := core.Limit{Rate: 1, Per: time.Minute}
	for i := range 3 {
		if w, err := b.Until(ctx, "test:room:A", l); err != nil || w != 0 {
			t.Fatalf("ask %d of an unspent budget: wait %s, %v; want 0", i, w, err)
		}
	}
	if w, err := b.Spend(ctx, "test:room:A", l); err != nil || w != 0 {
		t.Fatalf("the send after asking: wait %s, %v; asking spent it", w, err)
	}
	for i := range 3 {
		w, err := b.Until(ctx, "test:room:A", l)
		if err != nil || w <= 50*time.Second || w > time.Minute {
			t.Fatalf("ask %d of a spent budget: wait %s, %v; want just under a minute", i, w, err)
		}
	}
	if w, _ := b.Spend(ctx, "test:room:A", l); w <= 0 {
		t.Fatal("a second send within the minute went ahead")
	}
	// A burst of three: the first two sends leave one, the third none.
	burst := core.Limit{Rate: 3, Per: time.Minute, Burst: 3}
	for i := range 2 {
		if w, err := b.Spend(ctx, "test:burst", burst); err != nil || w != 0 {
			t.Fatalf("burst send %d: wait %s, %v", i, w, err)
		}
	}
	if w, err := b.Until(ctx, "test:burst", burst); err != nil || w != 0 {
		t.Fatalf("a burst with a send left: wait %s, %v; want 0", w, err)
	}
	if w, err := b.Spend(ctx, "test:burst", burst); err != nil || w != 0 {
		t.Fatalf("the burst's last send: wait %s, %v", w, err)
	}
	if w, err := b.Until(ctx, "test:burst", burst); err != nil || w <= 0 || w > 20*time.Second {
		t.Fatalf("a burst spent: wait %s, %v; want up to 20s", w, err)
	}
	if _, err := b.Until(ctx, "test:bad", core.Limit{}); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("a zero limit: %v", err)
	}
}

// testHandedBackSpendsNothing: a delivery handed back to the outbox for
// its room's budget has spent nothing of the bot-wide budget listed
// before it. Four cards into one room that takes one per 300 ms, under a
// bot-wide budget that has room for all: the bot-wide budget grants
// exactly four sends. Before, each hand-back spent a bot-wide send first
// (issue 31: after Telegram's downtime, sends lost so left the bot's
// thirty a second short).
func testHandedBackSpendsNothing(t *testing.T, h Harness) {
	e := newEnv(t, h)
	const cards = 4
	c := newTimedCourier()
	all, room := "test:all:"+t.Name(), "test:room:C1:"+t.Name()
	c.budget = []core.Allowance{
		{Key: all, Limit: core.Limit{Rate: 1000, Per: time.Second, Burst: 1000}},
		{Key: room, Limit: core.Limit{Rate: 1, Per: 300 * time.Millisecond}},
	}
	b := &untilCount{grantClock: grantClock{Budget: e.store.(core.Budget)}}
	for range cards {
		e.ask(decision("ops"))
	}
	e.run(c, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, MinIdle: time.Hour, Budget: b})
	c.waitFor(t, cards)
	if n := len(c.postTimes("C1")); n != cards {
		t.Fatalf("%d posts into the room, want %d", n, cards)
	}
	if b.later() == 0 && b.refusals(room) == 0 {
		t.Fatal("no card was ever asked to wait for the room: the test tested nothing")
	}
	if n := len(b.of(all)); n != cards {
		t.Errorf("the bot-wide budget granted %d sends for %d cards; a card handed back spent one", n, cards)
	}
}

// untilCount is grantClock, counting the times Until said to wait.
type untilCount struct {
	grantClock
	mu    sync.Mutex
	waits int
}

func (u *untilCount) Until(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	w, err := u.grantClock.Until(ctx, key, l)
	if err == nil && w > 0 {
		u.mu.Lock()
		u.waits++
		u.mu.Unlock()
	}
	return w, err
}

func (u *untilCount) later() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.waits
}
