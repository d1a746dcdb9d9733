package slack

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestSocketPauseStartsOverAfterAHealthyConnection: the pause before
// Socket Mode is opened again after Slack refused the app token doubles
// while refusals follow each other, and starts over from the shortest
// once a connection has stayed up a while; a connection lost at once
// does not reset it. Before, it never started over: a bridge refused a
// few times over days waited ever longer at each new refusal, up to
// five minutes with no clicks or replies arriving.
func TestSocketPauseStartsOverAfterAHealthyConnection(t *testing.T) {
	fake := slackfake.New()
	defer fake.Close()
	refuse := func() { fake.FailNext("apps.connections.open", slackfake.Failure{Error: "invalid_auth"}) }
	for range 3 {
		refuse()
	}
	svc, _ := coretest.Open(t, coretest.Options{})
	a, err := New(svc, Options{BotToken: "xoxb-test", AppToken: "xapp-test", APIURL: fake.APIURL(), PingInterval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clock := core.NewSimClock(time.Now())
	pauses := make(chan time.Duration)
	a.now = clock.Now
	a.sleep = func(ctx context.Context, d time.Duration) bool {
		select {
		case pauses <- d: // the run waits here until the test takes it
			return true
		case <-ctx.Done():
			return false
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { a.runSocket(ctx) })
	defer func() { cancel(); wg.Wait() }()

	const wait = 10 * time.Second
	pause := func(want time.Duration, what string) {
		t.Helper()
		select {
		case got := <-pauses:
			if got != want {
				t.Fatalf("%s: paused %s, want %s", what, got, want)
			}
		case <-time.After(wait):
			t.Fatalf("%s: no pause within %s", what, wait)
		}
	}
	// connected waits until the adapter has taken the connection's news:
	// Slack's envelopes on it come after, and one is acknowledged.
	connected := func() {
		t.Helper()
		if !fake.WaitFor(wait, func() bool { return fake.Connections() == 1 }) {
			t.Fatal("no socket mode connection")
		}
		env, err := fake.SendEnvelope("slash_commands", []byte(`{"command":"/x"}`), wait)
		if err != nil {
			t.Fatal(err)
		}
		if !fake.WaitFor(wait, func() bool { return fake.Acked(env) }) {
			t.Fatal("the envelope was not acknowledged")
		}
	}
	// lost refuses the next connection and ends the one up, and waits
	// until it is gone (no other opens while the run pauses).
	lost := func() {
		t.Helper()
		refuse()
		fake.Disconnect()
		if !fake.WaitFor(wait, func() bool { return fake.Connections() == 0 }) {
			t.Fatal("the connection was not dropped")
		}
	}

	pause(time.Second, "the first refusal")
	pause(2*time.Second, "the second refusal in a row")
	pause(4*time.Second, "the third refusal in a row")

	connected()
	clock.Advance(socketHealthy)
	lost()
	pause(time.Second, "a refusal after a connection up for a while")

	connected()
	lost()
	pause(2*time.Second, "a refusal after a connection lost at once")
}
