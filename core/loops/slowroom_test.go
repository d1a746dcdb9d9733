package loops_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// stuckCourier posts into a log; its posts into the room stuck hang (a
// platform or callback URL that does not answer) until the test closes
// release, or the drain stops.
type stuckCourier struct {
	slackCourier
	stuck   string
	release chan struct{}
	entered chan struct{} // closed when a post into stuck first hangs
	once    sync.Once
	mu      sync.Mutex
	posted  map[string][]core.QuestionID // per room, in the order posted
}

func newStuckCourier(room string) *stuckCourier {
	return &stuckCourier{stuck: room, release: make(chan struct{}), entered: make(chan struct{}), posted: map[string][]core.QuestionID{}}
}

func (c *stuckCourier) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	if card.Room == c.stuck {
		c.once.Do(func() { close(c.entered) })
		select {
		case <-c.release:
		case <-ctx.Done():
			return core.MessageRef{}, ctx.Err()
		}
	}
	c.mu.Lock()
	c.posted[card.Room] = append(c.posted[card.Room], q.ID)
	c.mu.Unlock()
	card.ID = "m-" + string(q.ID) + "-" + card.Room
	return card, nil
}

func (c *stuckCourier) posts(room string) []core.QuestionID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.posted[room])
}

// heldCount is the embedded store, keeping what one consumer holds: the
// deliveries claimed and neither acked nor handed back, and the attempt
// count each hand-back carried.
type heldCount struct {
	*bolt.Store
	mu       sync.Mutex
	held     map[string]bool
	attempts []int // of each hand-back, in order
}

func (s *heldCount) Claim(ctx context.Context, surface core.Surface, consumer string, n int, minIdle, block time.Duration) ([]core.Delivery, error) {
	ds, err := s.Store.Claim(ctx, surface, consumer, n, minIdle, block)
	s.mu.Lock()
	for _, d := range ds {
		s.held[d.ID] = true
	}
	s.mu.Unlock()
	return ds, err
}

func (s *heldCount) Ack(ctx context.Context, surface core.Surface, id string) error {
	s.mu.Lock()
	delete(s.held, id)
	s.mu.Unlock()
	return s.Store.Ack(ctx, surface, id)
}

func (s *heldCount) Retry(ctx context.Context, d core.Delivery, consumer string, after time.Duration) error {
	s.mu.Lock()
	delete(s.held, d.ID)
	s.attempts = append(s.attempts, d.Attempts)
	s.mu.Unlock()
	return s.Store.Retry(ctx, d, consumer, after)
}

func (s *heldCount) state() (held int, attempts []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held), slices.Clone(s.attempts)
}

// twoRooms is a service whose route "ops" posts into Slack's C1 and C2,
// "one" into C1 alone and "two" into C2 alone, on st.
func twoRooms(t *testing.T, st core.Store) *core.Service { return twoRoomsOn(t, st, nil) }

// twoRoomsOn is twoRooms on clock (nil: the wall clock).
func twoRoomsOn(t *testing.T, st core.Store, clock core.Clock) *core.Service {
	deciders := map[core.Surface][]string{core.SurfaceSlack: {"U1"}}
	c1, c2 := core.Room{Surface: core.SurfaceSlack, ID: "C1"}, core.Room{Surface: core.SurfaceSlack, ID: "C2"}
	return coretest.Service(t, st, coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{c1, c2}, Deciders: deciders},
		"one": {Rooms: []core.Room{c1}, Deciders: deciders},
		"two": {Rooms: []core.Room{c2}, Deciders: deciders},
	}})
}

func askInto(t *testing.T, svc *core.Service, route string, n int) []core.QuestionID {
	var ids []core.QuestionID
	for i := range n {
		q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: route,
			ToolCallID: fmt.Sprintf("%s-%d", route, i), Text: "Which?", Reversibility: core.Reversible, Timeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ID)
	}
	return ids
}

// TestSlowRoomHoldsUpNoOther: while one room's posts hang, every card of
// the other room is posted, batch after batch, each room's in the order
// asked; once the hang ends, the slow room's cards follow in order.
// Before, the loop claimed the next batch only once every room's last
// delivery of the batch had its grant and the batch before had finished,
// so the other room got the cards of the first batch and no more.
func TestSlowRoomHoldsUpNoOther(t *testing.T) {
	const n = 30 // three batches of ten, each half C1's, half C2's, and more
	svc := twoRooms(t, coretest.OpenStore(t))
	ids := askInto(t, svc, "ops", n)
	c := newStuckCourier("C1")
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond})
	waitFor(t, "every card of C2 while C1 hangs", func() bool { return len(c.posts("C2")) == n })
	if got := c.posts("C2"); !slices.Equal(got, ids) {
		t.Fatalf("C2's cards posted in the order %v, want %v", got, ids)
	}
	if got := c.posts("C1"); len(got) != 0 {
		t.Fatalf("C1's posts hang, yet %v were posted", got)
	}
	close(c.release)
	waitFor(t, "C1's cards once it answers", func() bool { return len(c.posts("C1")) >= n })
	if got := c.posts("C1"); !slices.Equal(got, ids) {
		t.Fatalf("C1's cards posted in the order %v, want %v", got, ids)
	}
}

// TestSlowRoomFirstInLine: a room whose posts hang and whose cards fill
// the outbox ahead of another's holds up neither the other room's cards
// nor the loop's bound: the loop takes the other room's cards from
// behind the slow room's, holds at most three batches of the slow
// room's (two, and a batch more of those that come back; the rest go
// back to the outbox, their attempts not counted, due a little later),
// and once the hang ends the slow room's cards go out once each, in the
// order asked. Before, the first batch, all the slow room's, held up
// the loop until its last card's turn.
func TestSlowRoomFirstInLine(t *testing.T) {
	const batch, slow, fast = 4, 24, 3
	st := &heldCount{Store: coretest.OpenStore(t), held: map[string]bool{}}
	svc := twoRooms(t, st)
	slowIDs := askInto(t, svc, "one", slow)
	fastIDs := askInto(t, svc, "two", fast)
	c := newStuckCourier("C1")
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Batch: batch, Block: 20 * time.Millisecond, MaxAttempts: 1})
	waitFor(t, "C2's cards while C1's hang ahead of them", func() bool { return len(c.posts("C2")) == fast })
	if got := c.posts("C2"); !slices.Equal(got, fastIDs) {
		t.Fatalf("C2's cards posted in the order %v, want %v", got, fastIDs)
	}
	// Three batches held for the room, and at most the claim in hand
	// being sorted.
	held, attempts := st.state()
	if held > 4*batch {
		t.Errorf("the loop holds %d deliveries behind a hanging room; want at most three batches and a claim (%d)", held, 4*batch)
	}
	if len(attempts) == 0 {
		t.Error("no delivery of the hanging room went back to the outbox: the loop cannot have reached C2's cards past them")
	}
	for _, a := range attempts {
		if a != 0 {
			t.Fatalf("a delivery handed back for its busy room carried %d attempts; want it uncounted (0)", a)
		}
	}
	close(c.release)
	waitFor(t, "C1's cards once it answers", func() bool { return len(c.posts("C1")) >= slow })
	postedInOrder(t, svc, c, slowIDs, "a card held back for its busy room was given up (MaxAttempts 1)")
}

// TestStopHandsBackASlowRoom: another room's card asked while a room's
// post hangs is posted meanwhile (before, the hanging room's batch held
// up the loop, and it was never claimed); and a drain stopped then hands
// back the hanging post and the room's cards waiting behind it, none of
// them counted as an attempt, so the next drain posts them all, in
// order, none given up (MaxAttempts 1).
func TestStopHandsBackASlowRoom(t *testing.T) {
	svc := twoRooms(t, coretest.OpenStore(t))
	ids := askInto(t, svc, "one", 5)
	c := newStuckCourier("C1")
	stop := startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, MaxAttempts: 1})
	within(t, c.entered, "C1's first post never started")
	askInto(t, svc, "two", 1)
	waitFor(t, "C2's card", func() bool { return len(c.posts("C2")) == 1 })
	stop()
	close(c.release)
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c2", Block: 20 * time.Millisecond, MaxAttempts: 1})
	waitFor(t, "C1's cards after the restart", func() bool { return len(c.posts("C1")) >= len(ids) })
	postedInOrder(t, svc, c, ids, "the stop used up a card's only attempt")
}

// TestLineKeepsOrderWhenClaimedLate: deliveries sent back to the outbox
// for a busy room keep their order when the loop claims them back well
// after they fell due (here the clock jumps; in a bridge the loop claims
// no more while the rooms hold more than a batch, and on Redis a retry
// that falls due goes back on the stream behind whatever waits there).
// Before, the first of the line was forgotten a second after it fell
// due, came back as a new delivery and went to the end of its room's
// line, behind cards asked after it.
func TestLineKeepsOrderWhenClaimedLate(t *testing.T) {
	const batch, cards = 2, 8 // the room holds two batches; four go back to the outbox
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &heldCount{Store: coretest.OpenStoreOn(t, clock.Now), held: map[string]bool{}}
	svc := twoRoomsOn(t, st, clock)
	ids := askInto(t, svc, "one", cards)
	c := newStuckCourier("C1")
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Batch: batch, Block: 20 * time.Millisecond})
	within(t, c.entered, "C1's first post never started")
	waitFor(t, "two batches held for C1", func() bool { held, _ := st.state(); return held == 2*batch })
	clock.Advance(2 * time.Second) // C1's post is slow: the loop claims past it
	waitFor(t, "the rest sent back to the outbox", func() bool { _, back := st.state(); return len(back) == cards-2*batch })
	close(c.release)
	waitFor(t, "the cards C1 held", func() bool { return len(c.posts("C1")) == 2*batch })
	// The line fell due two seconds after it went back, a card each half
	// second: the first more than a second ago, the next less.
	clock.Advance(3200 * time.Millisecond)
	waitFor(t, "the line's cards that fell due", func() bool { return len(c.posts("C1")) >= 2*batch+2 })
	clock.Advance(time.Second)
	waitFor(t, "every card", func() bool { return len(c.posts("C1")) >= cards })
	if got := c.posts("C1"); !slices.Equal(got, ids) {
		t.Fatalf("C1's cards posted in the order %v, want %v", got, ids)
	}
}

// postedInOrder checks that c posted ids in room C1, in that order, and
// that none of them was given up (given: why that would be wrong).
func postedInOrder(t *testing.T, svc *core.Service, c *stuckCourier, ids []core.QuestionID, given string) {
	t.Helper()
	if got := c.posts("C1"); !slices.Equal(got, ids) {
		t.Fatalf("C1's cards posted in the order %v, want %v", got, ids)
	}
	for _, id := range ids {
		for _, e := range coretest.EventsOf(t, svc, id) {
			if e.Kind == core.EventUndelivered {
				t.Fatalf("%s: %+v", given, e)
			}
		}
	}
}
