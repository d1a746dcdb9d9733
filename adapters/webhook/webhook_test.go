package webhook_test

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestWebhookRetriedUntilTaken: a receiver that fails (500), then asks
// to wait (429, Retry-After: 1), then takes it, gets the same event three
// times, each signed as the README says (checked by the receiver's own
// HMAC code), the body being the wait's response byte for byte; the third
// comes no sooner than the Retry-After; it is processed once, and the
// outbox is empty after. On both stores.
func TestWebhookRetriedUntilTaken(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			recv := newReceiver(t, status(http.StatusInternalServerError), retryAfter(http.StatusTooManyRequests, "1"), status(http.StatusNoContent))
			r := newRig(t, open(t), recv, nil)
			results := make(chan error, 8)
			stop := drain(t, r.svc, reporting{r.sender(t, nil), results}, loops.DeliverOptions{Consumer: "c1"})

			id := r.ask(t, recv.url()+"run-1")
			r.answer(t, id)
			var failed []error
			for err := range results {
				if err == nil {
					break // taken: acked even if the loop stops now
				}
				failed = append(failed, err)
			}
			stop()

			got := recv.requests()
			if len(got) != 3 {
				t.Fatalf("the receiver got %d requests, want 3", len(got))
			}
			accepted, processed, bad := recv.outcome()
			if len(bad) > 0 {
				t.Fatalf("requests failed the receiver's own verification: %v", bad)
			}
			want := r.waitBody(t, id)
			for i, g := range got {
				if g.header.Get(webhook.HeaderID) != core.WebhookKey(id) {
					t.Errorf("request %d: event id %q, want %q", i, g.header.Get(webhook.HeaderID), core.WebhookKey(id))
				}
				if !bytes.Equal(g.body, want) {
					t.Errorf("request %d: body\n%s\nis not the wait's\n%s", i, g.body, want)
				}
				if ct := g.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
					t.Errorf("request %d: content type %q", i, ct)
				}
			}
			if wait := got[2].at.Sub(got[1].at); wait < time.Second {
				t.Errorf("the attempt after Retry-After: 1 came %s after the 429", wait)
			}
			if len(accepted) != 1 || accepted[core.WebhookKey(id)] != 1 || len(processed) != 1 {
				t.Errorf("accepted %v and processed %v, want the one event once", accepted, processed)
			}
			var ra *core.RetryAfter
			if len(failed) != 2 || errors.As(failed[0], &ra) || !errors.As(failed[1], &ra) || ra.After != time.Second {
				t.Errorf("failed attempts: %v, want the 500, then the 429 waiting 1s", failed)
			}
			if ds, err := r.st.Claim(t.Context(), core.SurfaceWebhook, "check", 10, time.Hour, 0); err != nil || len(ds) != 0 {
				t.Errorf("the outbox still holds %+v (%v)", ds, err)
			}
			for _, ev := range coretest.EventsOf(t, r.st, id) {
				if ev.Kind == core.EventUndelivered {
					t.Errorf("a webhook that was taken is recorded undelivered: %+v", ev)
				}
			}
		})
	}
}

// TestReplicaDyingMidDeliveryLosesNothing: two replicas over one store.
// The first claims the webhook, sends it, and dies before it can record
// that it did; the second takes the claim over once it has gone idle and
// sends it again, under the same event id, so the receiver, which drops
// repeats by event id, processes it once. On both stores.
func TestReplicaDyingMidDeliveryLosesNothing(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			recv := newReceiver(t, status(http.StatusOK))
			st := open(t)
			r := newRig(t, st, recv, nil)
			dying := newCrashingStore(st)
			first := r.service(t, dying)
			const idle = 300 * time.Millisecond
			drain(t, first, r.sender(t, &http.Client{Transport: dyingTransport{dying}}), loops.DeliverOptions{Consumer: "replica-a", MinIdle: idle})

			id := r.ask(t, recv.url()+"run-1")
			r.answer(t, id)
			recv.await(t, 1)
			select {
			case <-dying.died:
			case <-time.After(20 * time.Second):
				t.Fatal("the first replica sent the webhook and lived")
			}
			drain(t, r.svc, r.sender(t, nil), loops.DeliverOptions{Consumer: "replica-b", MinIdle: idle})
			recv.await(t, 2)

			got := recv.requests()
			if got[0].header.Get(webhook.HeaderID) != got[1].header.Get(webhook.HeaderID) {
				t.Fatalf("the event id changed across replicas: %q, %q", got[0].header.Get(webhook.HeaderID), got[1].header.Get(webhook.HeaderID))
			}
			accepted, processed, bad := recv.outcome()
			if len(bad) > 0 {
				t.Fatalf("requests failed the receiver's own verification: %v", bad)
			}
			if accepted[core.WebhookKey(id)] != 2 {
				t.Fatalf("accepted %v, want the one event from each replica", accepted)
			}
			if len(processed) != 1 || processed[0] != core.WebhookKey(id) {
				t.Fatalf("processed %v, want the one event once", processed)
			}
		})
	}
}

// TestWebhookGivenUpAfterItsAge: a receiver that always fails is retried
// until the webhook is older than give_up_after, then dropped, with an
// undelivered event on the question saying so, and nothing left in the
// outbox. On both stores.
func TestWebhookGivenUpAfterItsAge(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			recv := newReceiver(t, status(http.StatusBadGateway))
			clock := core.NewSimClock(time.Now().UTC())
			r := newRig(t, open(t), recv, clock)
			dropped := make(chan core.Delivery, 1)
			o := loops.DeliverOptions{Consumer: "c1", GiveUpAfter: time.Hour, MaxAttempts: 1}
			o.OnError = func(d core.Delivery, err error) {
				// MaxAttempts 1 would drop it at once: GiveUpAfter rules.
				if clock.Now().Sub(d.CreatedAt) >= time.Hour {
					dropped <- d
				}
			}
			drain(t, r.svc, r.sender(t, nil), o)
			id := r.ask(t, recv.url()+"run-1")
			r.answer(t, id)
			recv.await(t, 2) // retried, though MaxAttempts is 1: younger than an hour
			clock.Advance(time.Hour)
			var d core.Delivery
			select {
			case d = <-dropped:
			case <-time.After(20 * time.Second):
				t.Fatal("the webhook was never given up")
			}
			if d.Key != core.WebhookKey(id) {
				t.Fatalf("dropped %+v", d)
			}
			// Recorded before it is reported (core's Deliver).
			var undelivered []core.Event
			for _, ev := range coretest.EventsOf(t, r.st, id) {
				if ev.Kind == core.EventUndelivered {
					undelivered = append(undelivered, ev)
				}
			}
			if len(undelivered) != 1 || undelivered[0].Surface != core.SurfaceWebhook || undelivered[0].Reason == "" {
				t.Fatalf("undelivered events %+v", undelivered)
			}
			n := len(recv.requests())
			if ds, err := r.st.Claim(t.Context(), core.SurfaceWebhook, "check", 10, time.Hour, 0); err != nil || len(ds) != 0 {
				t.Fatalf("the outbox still holds %+v (%v)", ds, err)
			}
			if len(recv.requests()) != n {
				t.Fatal("the receiver was called after the webhook was given up")
			}
		})
	}
}
