package loops_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// refusingCourier holds its first post until the test lets it go (the
// replica frozen while its send is out), then refuses it for good.
type refusingCourier struct {
	slackCourier
	entered chan struct{}
	release chan struct{}
}

func (c *refusingCourier) Post(ctx context.Context, _ *core.Question, _ core.MessageRef) (core.MessageRef, error) {
	close(c.entered)
	<-c.release
	return core.MessageRef{}, &core.Permanent{Err: errors.New("channel_not_found")}
}

// TestAGiveUpIsRecordedOnlyByTheClaimsHolder: a drain frozen past MinIdle
// while its send was out, whose claim another consumer took over and
// delivered meanwhile, records no give-up when its own send then fails
// for good: the question's history does not say undelivered of a card
// that was delivered, and the drain reports that its claim was taken
// over. Before, it appended the undelivered event all the same (and
// counted the delivery as given up), though its ack then changed
// nothing.
func TestAGiveUpIsRecordedOnlyByTheClaimsHolder(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	st := coretest.OpenStore(t)
	svc := twoRoomsOn(t, st, clock)
	c := &refusingCourier{entered: make(chan struct{}), release: make(chan struct{})}
	reported := make(chan string, 4)
	const minIdle = time.Hour // the heartbeat does not renew within the test
	startDrain(t, svc, c, loops.DeliverOptions{Consumer: "c1", Block: 20 * time.Millisecond, MinIdle: minIdle,
		OnError: func(_ core.Delivery, err error) { reported <- err.Error() }})
	q := askInto(t, svc, "one", 1)[0]
	within(t, c.entered, "the post never went out")

	// c1 is frozen past MinIdle; c2 takes its claim over and delivers it.
	clock.Advance(minIdle + time.Minute)
	taken, err := st.Claim(t.Context(), core.SurfaceSlack, "c2", 10, 0, 0)
	if err != nil || len(taken) != 1 || taken[0].QuestionID != q {
		t.Fatalf("take-over by c2: %+v, %v; want the card of %s", taken, err, q)
	}
	if err := st.Ack(t.Context(), core.SurfaceSlack, taken[0].ID); err != nil {
		t.Fatal(err)
	}
	close(c.release)

	if msg := within(t, reported, "c1 reported nothing of the post refused after the take-over"); !strings.Contains(msg, "taken over") {
		t.Fatalf("c1 reported %q; want its claim taken over", msg)
	}
	if e := undelivered(t, svc, q); e != nil {
		t.Fatalf("the question's history says its card was undelivered (%q), though c2 delivered it", e.Reason)
	}
}
