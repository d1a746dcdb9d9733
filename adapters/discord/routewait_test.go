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
	route429 := http.Header{"Retry-After": {"30"}, "X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"0"},
		"X-Ratelimit-Reset-After": {"30"}, "X-Ratelimit-Bucket": {"abcd1234"}, "X-Ratelimit-Scope": {"user"}}
	const body = `{"message":"You are being rate limited.","retry_after":30,"global":false}`
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
	for name, tc := range map[string]struct {
		method, path string
		// setup makes what the calls need (a card to edit), before the
		// route is limited.
		setup func(t *testing.T, a *Adapter) core.MessageRef
		call  func(ctx context.Context, a *Adapter, ref core.MessageRef) error
	}{
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
	} {
		t.Run(name, func(t *testing.T) {
			fake := discordfake.New()
			t.Cleanup(fake.Close)
			a, err := New(nil, Options{Token: fake.Token, APIURL: fake.APIURL(), Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			var ref core.MessageRef
			if tc.setup != nil {
				ref = tc.setup(t, a)
			}
			fake.Fail(tc.method, tc.path, http.StatusTooManyRequests, body, route429)
			var ra *core.RetryAfter
			if err := tc.call(t.Context(), a, ref); !errors.As(err, &ra) {
				t.Fatalf("the 429 itself: %v", err)
			}
			sent := len(fake.Calls())
			// The next call on the route, from a drain that is stopping.
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
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
