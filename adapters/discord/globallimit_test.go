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
			for _, room := range []string{"222", core.DMRoom(alice.ID)} {
				var ra *core.RetryAfter
				if room != "222" {
					err = post(room)
				}
				if !errors.As(err, &ra) || ra.After <= 0 || ra.After > first.After {
					t.Fatalf("%s, after a bot-wide 429 asking %v: %v", room, first.After, err)
				}
			}
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
