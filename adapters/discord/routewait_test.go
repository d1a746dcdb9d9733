package discord

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
)

// route429 is a route's own 429 (scope user) asking for a wait of
// half a minute, its route having no requests left meanwhile.
var (
	route429 = http.Header{"Retry-After": {"30"}, "X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset-After": {"30"}, "X-Ratelimit-Bucket": {"abcd1234"}, "X-Ratelimit-Scope": {"user"}}
	route429Body = `{"message":"You are being rate limited.","retry_after":30,"global":false}`
)

// routeCall is a delivery of the courier's on one route: method and
// path are its request's, setup makes what it needs (a card to edit)
// before the route is limited.
type routeCall struct {
	method, path string
	setup        func(t *testing.T, a *Adapter) core.MessageRef
	call         func(ctx context.Context, a *Adapter, ref core.MessageRef) error
}

// routeCalls are the courier's routes: a card into a channel, an edit
// in it, a DM opened for a person.
func routeCalls() map[string]routeCall {
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
	return map[string]routeCall{
		"post": {http.MethodPost, "channels/111/messages", nil,
			func(ctx context.Context, a *Adapter, _ core.MessageRef) error {
				_, err := a.Post(ctx, q, core.MessageRef{Room: "111", Kind: core.DeliverPost})
				return err
			}},
		"edit": {http.MethodPatch, "channels/111/messages/",
			func(t *testing.T, a *Adapter) core.MessageRef {
				ref, err := a.Post(t.Context(), q, core.MessageRef{Room: "111", Kind: core.DeliverPost})
				if err != nil {
					t.Fatal(err)
				}
				return ref
			},
			func(ctx context.Context, a *Adapter, ref core.MessageRef) error { return a.Update(ctx, q, ref) }},
		"dm": {http.MethodPost, "users/@me/channels", nil,
			func(ctx context.Context, a *Adapter, _ core.MessageRef) error {
				_, err := a.Post(ctx, q, core.MessageRef{Room: core.DMRoom(alice.ID), Kind: core.DeliverPost})
				return err
			}},
	}
}

// limitRoute makes what tc needs, has Discord answer its request with a
// route's 429 once, and returns what the call is made on.
func limitRoute(t *testing.T, fake *discordfake.Server, a *Adapter, tc routeCall) core.MessageRef {
	t.Helper()
	var ref core.MessageRef
	if tc.setup != nil {
		ref = tc.setup(t, a)
	}
	fake.Fail(tc.method, tc.path, http.StatusTooManyRequests, route429Body, route429)
	var ra *core.RetryAfter
	if err := tc.call(t.Context(), a, ref); !errors.As(err, &ra) {
		t.Fatalf("the 429 itself: %v", err)
	}
	return ref
}

// TestRouteWaitIsHandedBackNotSlept: once a route's 429 (or its last
// request's headers) says it has no requests left for half a minute,
// the next delivery on that route (another card into the same channel,
// an edit in it, a DM opened for another person) is not sent and comes
// back at once as a core.RetryAfter for the rest of the wait, nothing
// sent, so the outbox keeps it until then; a stop meanwhile ends nothing
// in flight. Before, discordgo's limiter slept the wait out before the
// request, and no context ends that sleep: the room's worker, and a
// stopping drain waiting for it, sat out the whole reset, then sent.
func TestRouteWaitIsHandedBackNotSlept(t *testing.T) {
	const reset = 30 * time.Second
	for name, tc := range routeCalls() {
		t.Run(name, func(t *testing.T) {
			fake := discordfake.New()
			t.Cleanup(fake.Close)
			a, err := New(nil, Options{Token: fake.Token, APIURL: fake.APIURL(), Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			ref := limitRoute(t, fake, a, tc)
			sent := len(fake.Calls())
			// The next call on the route, from a drain that is stopping.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			var ra *core.RetryAfter
			done := make(chan error, 1)
			go func() { done <- tc.call(ctx, a, ref) }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the next call on a route waiting %v did not return within 10s of its context ending", reset)
			}
			if !errors.As(err, &ra) || ra.After <= 0 || ra.After > reset {
				t.Fatalf("the next call on the route: %v; want a RetryAfter of at most %v", err, reset)
			}
			if n := len(fake.Calls()); n != sent {
				t.Fatalf("%d requests went out on a route with none left", n-sent)
			}
		})
	}
}

// TestRouteWaitSpendsNoRate: a delivery handed back for its route's
// wait sent nothing, so it spends none of the courier's own rate
// (tokenBucket, Options.RatePerSecond), nor, for a person's DM room,
// the second request's share of it. Before, the rate's token was taken
// before the route was asked (two for a DM room), and kept: every
// delivery handed back so lowered the courier's throughput for others
// as if it had been sent. It says so (core.Unspent), for the drain to
// give back the shared budgets' sends it spent for it (Budgets), which
// until then stayed spent on every replica.
func TestRouteWaitSpendsNoRate(t *testing.T) {
	for name, tc := range routeCalls() {
		t.Run(name, func(t *testing.T) {
			fake := discordfake.New()
			t.Cleanup(fake.Close)
			// The rate's clock stands still: nothing comes back to it
			// but what is given back.
			clock := core.NewSimClock(time.Now())
			a, err := New(nil, Options{Token: fake.Token, APIURL: fake.APIURL(), RatePerSecond: 10, Now: clock.Now, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			ref := limitRoute(t, fake, a, tc)
			sent, left := len(fake.Calls()), a.bucket.left()
			var ra *core.RetryAfter
			if err = tc.call(t.Context(), a, ref); !errors.As(err, &ra) || !errors.Is(err, errRouteWait) {
				t.Fatalf("the next call on the route: %v; want its route's wait", err)
			}
			if n := len(fake.Calls()); n != sent {
				t.Fatalf("%d requests went out on a route with none left", n-sent)
			}
			if got := a.bucket.left(); got != left {
				t.Errorf("the courier's rate had %v requests left before a delivery that sent none, and %v after", left, got)
			}
			if un := (*core.Unspent)(nil); !errors.As(err, &un) {
				t.Errorf("the call on the route made no request and does not say so (core.Unspent): %v", err)
			}
		})
	}
}

// left is how many requests the bucket has now, by its last count.
func (b *tokenBucket) left() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tokens
}
