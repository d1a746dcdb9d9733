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

// TestBotWide429HoldsEveryRoom: a 429 for the whole bot (Discord's
// global limit, marked in its headers or in its body alone, or
// Cloudflare's page while it bans the IP) holds back every request of
// the courier until its wait is over: a post to another room, or to a
// person's DMs, goes back to the outbox for the rest of the wait without
// a request, and goes out once it is over. A route's own 429 (scope user
// or shared) holds back that delivery alone. Before, only the delivery
// that met a bot-wide 429 waited; every other room's went on, met the
// same 429, and each one counted towards Discord's ban of 10,000 invalid
// requests in ten minutes.
func TestBotWide429HoldsEveryRoom(t *testing.T) {
	for name, tc := range map[string]struct {
		body    string
		header  http.Header
		botWide bool
	}{
		"global, as documented": {`{"message":"You are being rate limited.","retry_after":64.57,"global":true}`,
			http.Header{"Retry-After": {"65"}, "X-Ratelimit-Global": {"true"}, "X-Ratelimit-Scope": {"global"}}, true},
		"global, in the body alone": {`{"message":"You are being rate limited.","retry_after":64.57,"global":true}`,
			http.Header{"Retry-After": {"65"}, "X-Ratelimit-Bucket": {"abcd1234"}}, true},
		"cloudflare ban": {cloudflare429, http.Header{"Retry-After": {"1800"}}, true},
		"route": {`{"message":"You are being rate limited.","retry_after":64.57,"global":false}`,
			http.Header{"Retry-After": {"65"}, "X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"0"},
				"X-Ratelimit-Reset-After": {"64.57"}, "X-Ratelimit-Bucket": {"abcd1234"}, "X-Ratelimit-Scope": {"user"}}, false},
		"shared resource": {`{"message":"The resource is being rate limited.","retry_after":1336.57,"global":false}`,
			http.Header{"Retry-After": {"1337"}, "X-Ratelimit-Bucket": {"abcd1234"}, "X-Ratelimit-Scope": {"shared"}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			fake := discordfake.New()
			t.Cleanup(fake.Close)
			clock := &wallClock{}
			a, err := New(nil, Options{Token: fake.Token, APIURL: fake.APIURL(), Now: clock.now, Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
			post := func(room string) error {
				_, err := a.Post(ctx, q, core.MessageRef{Room: room, Kind: core.DeliverPost})
				return err
			}
			fake.Fail(http.MethodPost, "channels/111/messages", http.StatusTooManyRequests, tc.body, tc.header)
			var first *core.RetryAfter
			if err := post("111"); !errors.As(err, &first) {
				t.Fatalf("the 429 itself: %v", err)
			}
			sent := len(fake.Calls())
			err = post("222")
			if !tc.botWide {
				if err != nil || len(fake.Messages("222")) != 1 {
					t.Fatalf("a route's 429 held back another room: %v", err)
				}
				return
			}
			held := func(room string, err error) {
				t.Helper()
				var ra *core.RetryAfter
				if !errors.As(err, &ra) || ra.After <= 0 || ra.After > first.After {
					t.Fatalf("%s, after a bot-wide 429 asking %v: %v", room, first.After, err)
				}
			}
			held("222", err)
			dm := core.DMRoom(alice.ID)
			held(dm, post(dm))
			if n := len(fake.Calls()); n != sent {
				t.Fatalf("%d requests went out while the bot was held back", n-sent)
			}
			clock.spend(first.After + time.Second)
			if err := post("222"); err != nil || len(fake.Messages("222")) != 1 {
				t.Fatalf("after the wait: %v, %d messages", err, len(fake.Messages("222")))
			}
		})
	}
}

// TestBotWideHoldIsNewOncePerHold: of the bot-wide 429s that come back
// while the courier is held (requests in flight when the first came),
// only the first starts a hold, so the warning is logged once; a later
// one lengthens the hold, and one after the hold is over starts another.
func TestBotWideHoldIsNewOncePerHold(t *testing.T) {
	clock := &wallClock{}
	b := newTokenBucket(50, clock.now)
	if !b.hold(clock.now().Add(time.Minute)) {
		t.Fatal("the first bot-wide 429 did not start a hold")
	}
	if b.hold(clock.now().Add(2 * time.Minute)) {
		t.Fatal("a second bot-wide 429 during the hold started another")
	}
	clock.spend(90 * time.Second)
	var ra *core.RetryAfter
	if err := b.wait(context.Background()); !errors.As(err, &ra) || ra.After <= 29*time.Second || ra.After > 30*time.Second {
		t.Fatalf("90s into a hold lengthened to 2m: %v, want 30s left", err)
	}
	clock.spend(time.Minute)
	if err := b.wait(context.Background()); err != nil {
		t.Fatalf("after the hold: %v", err)
	}
	if !b.hold(clock.now().Add(time.Minute)) {
		t.Fatal("a bot-wide 429 after the hold was over did not start a new one")
	}
}
