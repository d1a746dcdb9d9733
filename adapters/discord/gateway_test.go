package discord

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestGatewayStopsReconnectingWhenStopped: a gateway connection lost
// while Discord is out of reach is tried again until the adapter stops
// (its Run ends: shutdown, or the gateway lease gone to another
// replica), and not after. Before, discordgo's own reconnect loop, which
// nothing stops, went on after Run had returned and opened a session as
// soon as Discord was back: a second gateway on a replica that no longer
// held the lease, clicks handled on both.
func TestGatewayStopsReconnectingWhenStopped(t *testing.T) {
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	svc, _ := coretest.Open(t, coretest.Options{})
	a, err := New(svc, Options{Token: fake.Token, APIURL: fake.APIURL(), Gateway: true, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if !fake.WaitFor(10*time.Second, func() bool { return fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	fake.Refuse(true)
	fake.Drop()
	if !fake.WaitFor(10*time.Second, func() bool { return fake.Refused() > 0 }) {
		t.Fatal("the adapter never tried to reconnect")
	}
	cancel()
	<-done
	fake.Refuse(false)
	// discordgo's loop tries again a second, then two, after the first
	// refusal: three seconds see any attempt it makes.
	if fake.WaitFor(3*time.Second, func() bool { return fake.Connected() > 0 }) {
		t.Fatalf("a gateway session opened after the adapter stopped (%d identifies)", len(fake.Identified()))
	}
}

// TestGatewayResumesAfterADropAndOnOp7: a gateway connection cut by the
// network, or closed at Discord's request (op 7, Reconnect), is opened
// again and resumed (no second identify), and clicks are answered over
// it.
func TestGatewayResumesAfterADropAndOnOp7(t *testing.T) {
	r := newRig(t, rigOptions{gateway: true})
	if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
		t.Fatal("the adapter never connected to the gateway")
	}
	q := r.ask(decisionInput())
	card := r.card(q.ID, nil)
	for i, cut := range []func() error{
		func() error { r.fake.Drop(); return nil },
		r.fake.Reconnect,
	} {
		if err := cut(); err != nil {
			t.Fatal(err)
		}
		if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 0 }) {
			t.Fatalf("cut %d: the session did not end", i)
		}
		if !r.fake.WaitFor(10*time.Second, func() bool { return r.fake.Connected() == 1 }) {
			t.Fatalf("cut %d: the adapter did not connect again", i)
		}
	}
	if n := len(r.fake.Identified()); n != 1 {
		t.Fatalf("%d identifies: a reconnect identified afresh instead of resuming", n)
	}
	click := r.fake.Click(alice, card.ID, r.button(card, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefOption, Option: 1}).CustomID)
	if err := r.fake.Dispatch(click); err != nil {
		t.Fatal(err)
	}
	if !r.fake.WaitFor(10*time.Second, func() bool { return len(r.fake.Responses(click.ID)) == 1 }) {
		t.Fatal("a click after the reconnects was not answered")
	}
	if got := r.question(q.ID); got.State != core.StateAnswered {
		t.Fatalf("after the click: %s", got.State)
	}
}
