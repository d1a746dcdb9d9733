package discord

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestStopWhileWaitingForRateIsNoRepeat: a post whose drain stops while
// it waits for the courier's own rate (tokenBucket) has sent nothing:
// it says so (core.NotSent), and the card its retry posts is no
// possible repeat. Before, the wait gave back the bare context error,
// of unknown outcome to core, which kept the attempt's posting mark:
// the retry's card said it might be a second copy of a card never made.
func TestStopWhileWaitingForRateIsNoRepeat(t *testing.T) {
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceDiscord, ID: roomID}},
		Deciders: map[core.Surface][]string{core.SurfaceDiscord: {alice.ID}},
	}}})
	// The rate's clock stands still until the test moves it: one
	// request, then none until a second has passed.
	clock := core.NewSimClock(time.Now())
	a, err := New(svc, Options{Token: fake.Token, APIURL: fake.APIURL(), RatePerSecond: 1, Now: clock.Now, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	in := decisionInput()
	in.Route, in.Agent, in.RunID, in.Reversibility = "ops", "agent-a", "run-1", core.HardToReverse
	q, err := svc.Ask(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	post := func(key string) core.Delivery {
		return core.Delivery{ID: key, Kind: core.DeliverPost, Key: key, Surface: core.SurfaceDiscord, Room: roomID, QuestionID: q.ID, Route: "ops"}
	}
	if err := svc.DeliverOne(t.Context(), a, post("first"), nil); err != nil {
		t.Fatal(err)
	}
	sent := len(fake.Calls())
	// The drain stops as the next post goes to the courier, which has
	// no request left this second.
	ctx, stop := context.WithCancel(t.Context())
	err = svc.DeliverOne(ctx, a, post("second"), func(context.Context) time.Duration { stop(); return 0 })
	var ns *core.NotSent
	if !errors.As(err, &ns) {
		t.Errorf("a post stopped while it waited for the rate: %v; want it not sent", err)
	}
	if n := len(fake.Calls()); n != sent {
		t.Fatalf("%d requests went out from a stopped post", n-sent)
	}
	clock.Advance(time.Second)
	if err := svc.DeliverOne(t.Context(), a, post("second"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got.Messages {
		if m.Delivery == "second" && m.Repeat {
			t.Errorf("the retry of a post that never left is flagged as a possible repeat: %+v", m)
		}
	}
	if n := len(got.Messages); n != 2 {
		t.Errorf("%d cards recorded; want 2", n)
	}
}
