package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

func init() {
	register("RateLimitedRoomWaitsAndOthersFlow", testRateLimitedRoom)
	register("StoppingDelivererHandsBackAtOnce", testHandback)
	register("BudgetSpacesSendsIntoOneRoom", testBudgetSpacing)
	register("HandedBackInTurn", testHandedBackInTurn)
}

// timedCourier posts to a log with the time of each post, and lets a test
// decide per post what the platform answers.
type timedCourier struct {
	recordingCourier
	answer func(room string, n int) error // nil: post
	budget []core.Allowance               // Budgets' answer for every delivery
	mu2    sync.Mutex
	posts  map[string][]time.Time // room -> post times
	tries  map[string]int
}

func newTimedCourier() *timedCourier {
	return &timedCourier{recordingCourier: recordingCourier{surface: core.SurfaceSlack, changed: make(chan struct{}, 64)},
		posts: map[string][]time.Time{}, tries: map[string]int{}}
}

func (c *timedCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	room := card.Room
	c.mu2.Lock()
	c.tries[room]++
	n := c.tries[room]
	c.mu2.Unlock()
	if c.answer != nil {
		if err := c.answer(room, n); err != nil {
			return core.MessageRef{}, err
		}
	}
	c.mu2.Lock()
	c.posts[room] = append(c.posts[room], time.Now())
	c.mu2.Unlock()
	return c.recordingCourier.Post(ctx, q, card)
}

func (c *timedCourier) Budgets(core.Delivery) []core.Allowance { return c.budget }

func (c *timedCourier) postTimes(room string) []time.Time {
	c.mu2.Lock()
	defer c.mu2.Unlock()
	return append([]time.Time(nil), c.posts[room]...)
}

// run drives the outbox with c until the test ends, or until cancel; wait
// returns once the deliverer has stopped.
func (e *env) run(c core.Courier, o loops.DeliverOptions) (cancel func(), wait func()) {
	ctx, cancel := context.WithCancel(e.t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loops.Deliver(ctx, e.svc, c, o)
	}()
	wait = func() { <-done }
	e.t.Cleanup(func() { cancel(); wait() })
	return cancel, wait
}

// testRateLimitedRoom: a 429 in one room makes that one delivery due
// again after its Retry-After, no sooner and not a minute later (no idle
// reclaim), while another room's card goes out meanwhile.
func testRateLimitedRoom(t *testing.T, h Harness) {
	e := newEnv(t, h)
	const after = time.Second
	c := newTimedCourier()
	var limited time.Time
	c.answer = func(room string, n int) error {
		if room == "C1" && n == 1 {
			limited = time.Now()
			return &core.RetryAfter{After: after, Err: errors.New("429")}
		}
		return nil
	}
	e.run(c, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, MinIdle: time.Hour})
	q := e.ask(decision("ops")) // posted in Slack C1 (and Telegram, not driven here)
	if err := e.store.Enqueue(t.Context(), []core.Delivery{{Key: "other-room", Kind: core.DeliverPost,
		Surface: core.SurfaceSlack, Room: "C2", QuestionID: q.ID, CreatedAt: epoch}}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, 2)
	c1, c2 := c.postTimes("C1"), c.postTimes("C2")
	if len(c1) != 1 || len(c2) != 1 {
		t.Fatalf("posts: C1 %d, C2 %d", len(c1), len(c2))
	}
	if !c2[0].Before(c1[0]) {
		t.Error("the other room waited for the rate-limited one")
	}
	// Due times are on the store's clock, the wall clock (they are kept,
	// and shared by replicas), so the gap is measured on it too: a machine
	// whose wall clock is being slewed runs it faster or slower than the
	// monotonic one (here, once, by half a percent).
	if gap := c1[0].Round(0).Sub(limited.Round(0)); gap < after {
		t.Errorf("the rate-limited post was retried %s after the 429; Retry-After was %s", gap, after)
	}
	// MinIdle is an hour: it came back through its due time, not the idle
	// reclaim.
}

// blockingCourier holds its first post until the test lets it go, so a
// deliverer can be stopped with claimed work in hand.
type blockingCourier struct {
	recordingCourier
	first   sync.Once
	entered chan struct{}
	release chan struct{}
}

func (c *blockingCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.first.Do(func() {
		c.entered <- struct{}{} // buffered: the first post always stops here
		<-c.release
	})
	return c.recordingCourier.Post(ctx, q, card)
}

// testHandback: a deliverer stopped in the middle of a batch hands back
// what it claimed and did not send, so another consumer takes it at once,
// not after the idle limit.
func testHandback(t *testing.T, h Harness) {
	e := newEnv(t, h)
	// Three cards wait before the deliverer starts, so it claims them in
	// one batch.
	var qs []*core.Question
	for range 3 {
		qs = append(qs, e.ask(decision("ops")))
	}
	c := &blockingCourier{recordingCourier: recordingCourier{surface: core.SurfaceSlack, changed: make(chan struct{}, 8)},
		entered: make(chan struct{}, 1), release: make(chan struct{})}
	cancel, wait := e.run(c, loops.DeliverOptions{Consumer: "leaving", Block: 50 * time.Millisecond, MinIdle: time.Hour})
	select {
	case <-c.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the deliverer never posted")
	}
	// Stop it while the first post is on its way, then let that post
	// finish: it is recorded and acked; the rest are handed back.
	cancel()
	close(c.release)
	wait()
	left := e.claimAll(core.SurfaceSlack, "heir") // an hour's idle limit: only handed-back work comes
	if len(left) != 2 {
		t.Fatalf("handed back %d deliveries, want the 2 not sent", len(left))
	}
	for _, d := range left {
		if d.Attempts != 1 {
			t.Errorf("handed back %s at attempt %d; a hand-back is not an attempt", d.Key, d.Attempts)
		}
		if d.QuestionID == qs[0].ID {
			t.Errorf("the card that was posted was handed back too: %s", d.Key)
		}
	}
	if n := len(e.get(qs[0].ID).Messages); n != 1 {
		t.Errorf("the card posted while stopping was recorded %d times, want once", n)
	}
}

// testBudgetSpacing: with a budget of one send per 400 ms into a room,
// three cards for that room go out, and the budget granted their sends at
// least 400 ms apart. The grants are timed around each Spend call, not at
// the courier, whose own start may lag its grant on a busy machine: a
// grant at store time g lies between the call's start and its return, so
// g(n+1) - g(n) >= per means the return of one grant is at least per after
// the start of the grant before it.
func testBudgetSpacing(t *testing.T, h Harness) {
	e := newEnv(t, h)
	const per = 400 * time.Millisecond
	c := newTimedCourier()
	key := "test:room:C1:" + t.Name()
	c.budget = []core.Allowance{{Key: key, Limit: core.Limit{Rate: 1, Per: per}}}
	b := &grantClock{Budget: e.store.(core.Budget)}
	e.run(c, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, MinIdle: time.Hour, Budget: b})
	for range 3 {
		e.ask(decision("ops"))
	}
	c.waitFor(t, 3)
	if n := len(c.postTimes("C1")); n != 3 {
		t.Fatalf("%d posts into the room, want 3", n)
	}
	gs := b.of(key)
	if len(gs) != 3 {
		t.Fatalf("the budget granted %d sends, want 3", len(gs))
	}
	for i := 1; i < len(gs); i++ {
		// On the wall clock, the budget's own (see testRateLimitedRoom).
		if gap := gs[i].returned.Round(0).Sub(gs[i-1].called.Round(0)); gap < per-time.Millisecond {
			t.Errorf("sends %d and %d into one room were granted within %s; the budget allows one per %s", i-1, i, gap, per)
		}
	}
}

// testHandedBackInTurn: cards queued behind a room's spent budget are
// handed back to the outbox each due at its own coming send, not all at
// the next one: twelve cards into a room that takes one per 250 ms are
// each refused by the budget about once. Before, all that were handed
// back came due together and were refused again at every send, about
// 66 refusals for the twelve (issue 31: a burst's thousand card edits,
// claimed and written back every second, held up its clicks).
func testHandedBackInTurn(t *testing.T, h Harness) {
	e := newEnv(t, h)
	const per, cards = 250 * time.Millisecond, 12
	c := newTimedCourier()
	key := "test:room:C1:" + t.Name()
	c.budget = []core.Allowance{{Key: key, Limit: core.Limit{Rate: 1, Per: per}}}
	b := &grantClock{Budget: e.store.(core.Budget)}
	for range cards {
		e.ask(decision("ops"))
	}
	e.run(c, loops.DeliverOptions{Consumer: "c1", Block: 50 * time.Millisecond, MinIdle: time.Hour, Budget: b})
	c.waitFor(t, cards)
	if n := len(c.postTimes("C1")); n != cards {
		t.Fatalf("%d posts into the room, want %d", n, cards)
	}
	if n := b.refusals(key); n > 2*cards {
		t.Errorf("the budget refused %d sends of %d cards; want each handed back in its turn, about once", n, cards)
	}
}

// grantClock is the store's budget, noting when each granted Spend was
// called and when it returned, and counting the refusals.
type grantClock struct {
	core.Budget
	mu      sync.Mutex
	grants  map[string][]grant
	refused map[string]int
}

func (g *grantClock) refusals(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused[key]
}

type grant struct{ called, returned time.Time }

func (g *grantClock) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	called := time.Now()
	wait, err := g.Budget.Spend(ctx, key, l)
	if err == nil && wait > 0 {
		g.mu.Lock()
		if g.refused == nil {
			g.refused = map[string]int{}
		}
		g.refused[key]++
		g.mu.Unlock()
	}
	if err == nil && wait == 0 {
		g.mu.Lock()
		if g.grants == nil {
			g.grants = map[string][]grant{}
		}
		g.grants[key] = append(g.grants[key], grant{called, time.Now()})
		g.mu.Unlock()
	}
	return wait, err
}

func (g *grantClock) of(key string) []grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]grant(nil), g.grants[key]...)
}
