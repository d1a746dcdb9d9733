package loops_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/store/bolt"
)

// frozenMark is the embedded store whose first posting mark holds its
// caller until the test lets it go: the drain held up right before its
// courier's call, as a GC pause or a stopped VM holds a replica.
type frozenMark struct {
	*bolt.Store
	once    sync.Once
	frozen  chan struct{} // closed when the first mark is held
	release chan struct{}
}

func (s *frozenMark) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if strings.HasPrefix(key, "posting:") {
		s.once.Do(func() {
			close(s.frozen)
			<-s.release
		})
	}
	return s.Store.Lease(ctx, key, owner, ttl)
}

// postLog posts into a channel.
type postLog struct {
	slackCourier
	posted chan core.QuestionID
}

func (c *postLog) Post(_ context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	c.posted <- q.ID
	card.ID = "m-" + string(q.ID)
	return card, nil
}

// TestATakenOverClaimIsNotSentAfterAFreeze: a drain held up right before
// its courier's call for longer than MinIdle, whose claim another
// consumer took over meanwhile, does not send the delivery when it goes
// on: it checks the claim first, since it has not heard it confirmed for
// over half of MinIdle, finds it the other consumer's, and leaves it to
// that consumer (reported once), neither acking nor handing it back.
// Before, the post went out from both, the second unflagged (law 4), as
// the heartbeat's answer came too late for a room's current delivery.
func TestATakenOverClaimIsNotSentAfterAFreeze(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := &frozenMark{Store: coretest.OpenStore(t), frozen: make(chan struct{}), release: make(chan struct{})}
	svc := twoRoomsOn(t, st, clock)
	c := &postLog{posted: make(chan core.QuestionID, 4)}
	reported := make(chan string, 4)
	const minIdle = time.Hour // the heartbeat does not renew within the test
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, MinIdle: minIdle,
		OnError: func(_ core.Delivery, err error) { reported <- err.Error() }})
	q := askInto(t, svc, "one", 1)[0]
	within(t, st.frozen, "the post never reached its posting mark")

	// c1 is frozen past MinIdle; c2 takes its claim over.
	clock.Advance(minIdle + time.Minute)
	taken, err := st.Store.Claim(t.Context(), core.SurfaceSlack, "c2", 10, 0, 0)
	if err != nil || len(taken) != 1 || taken[0].QuestionID != q {
		t.Fatalf("take-over by c2: %+v, %v; want the card of %s", taken, err, q)
	}
	close(st.release)

	select {
	case id := <-c.posted:
		t.Fatalf("c1 posted the card of %s after c2 had taken its claim over", id)
	case msg := <-reported:
		if !strings.Contains(msg, "taken over") {
			t.Fatalf("c1 reported %q; want its claim taken over", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("c1 neither posted nor reported the card whose claim c2 took over")
	}
	// c2's claim is still c2's, for it to send, ack or hand back.
	if lost, err := st.Store.Extend(t.Context(), core.SurfaceSlack, "c2", []string{taken[0].ID}); err != nil || len(lost) != 0 {
		t.Fatalf("c2's claim after c1 went on: lost %q, %v; want it kept", lost, err)
	}
}
