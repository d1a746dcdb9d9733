package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("RetryIsDueAfterItsWaitAndNoSooner", testRetryDue)
	register("RetryHandsBackAtOnceAndOnlyOwnClaims", testRetryHandback)
	register("ExtendKeepsASlowSendersClaims", testExtend)
	register("SpendHoldsABudget", testSpend)
}

// enqueueOne stores one Slack post delivery and returns its key.
func (e *env) enqueueOne(key string) {
	e.t.Helper()
	if err := e.store.Enqueue(e.t.Context(), []core.Delivery{{Key: key, Kind: core.DeliverPost,
		Surface: core.SurfaceSlack, Room: "C1", CreatedAt: epoch}}); err != nil {
		e.t.Fatal(err)
	}
}

// claimOne claims from Slack's outbox and fails unless exactly one
// delivery comes.
func (e *env) claimOne(consumer string, minIdle, block time.Duration) core.Delivery {
	e.t.Helper()
	ds, err := e.store.Claim(e.t.Context(), core.SurfaceSlack, consumer, 10, minIdle, block)
	if err != nil || len(ds) != 1 {
		e.t.Fatalf("claim by %s: %+v, %v; want one delivery", consumer, ds, err)
	}
	return ds[0]
}

func (e *env) claimNone(consumer string, minIdle time.Duration) {
	e.t.Helper()
	ds, err := e.store.Claim(e.t.Context(), core.SurfaceSlack, consumer, 10, minIdle, 0)
	if err != nil || len(ds) != 0 {
		e.t.Fatalf("claim by %s: %+v, %v; want nothing", consumer, ds, err)
	}
}

func testRetryDue(t *testing.T, h Harness) {
	e := newEnv(t, h)
	e.enqueueOne("k-due")
	d := e.claimOne("a", time.Hour, 0)
	if d.Attempts != 1 {
		t.Fatalf("first hand-out: attempts %d", d.Attempts)
	}
	const wait = 1500 * time.Millisecond
	retried := time.Now()
	if err := e.store.Retry(t.Context(), d, "a", wait); err != nil {
		t.Fatal(err)
	}
	// Not due yet: no consumer gets it, however idle its claim looks.
	ds, err := e.store.Claim(t.Context(), core.SurfaceSlack, "b", 10, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 0 && time.Since(retried) < wait {
		t.Fatalf("a retry was handed out before its wait: %+v", ds)
	}
	// It comes back once due, to a blocked claim, and counts on.
	got := e.claimOne("b", time.Hour, 10*time.Second)
	if since := time.Since(retried); since < wait {
		t.Fatalf("handed out %s after the retry; the wait was %s", since, wait)
	}
	if got.Key != "k-due" || got.Attempts != 2 {
		t.Fatalf("retried delivery %+v, want k-due at attempt 2", got)
	}
	if err := e.store.Ack(t.Context(), core.SurfaceSlack, got.ID); err != nil {
		t.Fatal(err)
	}
	e.claimNone("c", 0)
}

func testRetryHandback(t *testing.T, h Harness) {
	e := newEnv(t, h)
	e.enqueueOne("k-back")
	d := e.claimOne("a", time.Hour, 0)
	// Another consumer cannot hand back a's claim.
	if err := e.store.Retry(t.Context(), d, "b", 0); err != nil {
		t.Fatal(err)
	}
	e.claimNone("b", time.Hour)
	// a hands it back unsent (attempts not counted): b takes it at once,
	// without waiting for a's claim to look idle.
	d.Attempts--
	if err := e.store.Retry(t.Context(), d, "a", 0); err != nil {
		t.Fatal(err)
	}
	got := e.claimOne("b", time.Hour, 5*time.Second)
	if got.Key != "k-back" || got.Attempts != 1 {
		t.Fatalf("handed back %+v, want k-back at attempt 1", got)
	}
	// a's stale handle no longer reaches it: b holds it now.
	if err := e.store.Retry(t.Context(), d, "a", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Ack(t.Context(), core.SurfaceSlack, got.ID); err != nil {
		t.Fatal(err)
	}
	e.claimNone("c", 0)
	if err := e.store.Leave(t.Context(), core.SurfaceSlack, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Leave(t.Context(), core.SurfaceAPI, "a", time.Hour); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("leave on a surface without an outbox: %v", err)
	}
}

func testExtend(t *testing.T, h Harness) {
	e := newEnv(t, h)
	e.enqueueOne("k-slow")
	const idle = 400 * time.Millisecond
	d := e.claimOne("a", idle, 0)
	// a keeps renewing its claim for well past the idle limit; b, looking
	// for dead consumers' work, finds none. On a loaded machine a renewal
	// can come later than the idle limit, and b may then rightly take the
	// claim over (and, a's renewals no longer being of a claim of its own,
	// take it again once its own claim idles): each take-over is one more
	// attempt.
	late := 0
	for end := time.Now().Add(3 * idle); time.Now().Before(end); {
		renewed := time.Now()
		if err := e.store.Extend(t.Context(), core.SurfaceSlack, "a", []string{d.ID}); err != nil {
			t.Fatal(err)
		}
		ds, err := e.store.Claim(t.Context(), core.SurfaceSlack, "b", 10, idle, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 0 {
			if late == 0 && time.Since(renewed) < idle {
				t.Fatalf("a renewed claim was taken over: %+v", ds)
			}
			late++
		}
		time.Sleep(idle / 4)
	}
	// b's renewal of a's claim renews nothing; once a stops, b takes over.
	if err := e.store.Extend(t.Context(), core.SurfaceSlack, "b", []string{d.ID}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ds, err := e.store.Claim(t.Context(), core.SurfaceSlack, "b", 10, idle, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 1 {
			if ds[0].Key != "k-slow" || ds[0].Attempts != 2+late {
				t.Fatalf("taken over %+v; want attempt %d", ds[0], 2+late)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a's claim was never taken over after a stopped renewing it")
		}
		time.Sleep(idle / 4)
	}
}

func testSpend(t *testing.T, h Harness) {
	e := newEnv(t, h)
	l := core.Limit{Rate: 1, Per: time.Minute}
	if w, err := e.store.(core.Budget).Spend(t.Context(), "test:room:A", l); err != nil || w != 0 {
		t.Fatalf("first send: wait %s, %v", w, err)
	}
	w, err := e.store.(core.Budget).Spend(t.Context(), "test:room:A", l)
	if err != nil || w <= 0 || w > time.Minute {
		t.Fatalf("second send within the minute: wait %s, %v; want a wait of at most a minute", w, err)
	}
	// Another room's budget is its own.
	if w, err := e.store.(core.Budget).Spend(t.Context(), "test:room:B", l); err != nil || w != 0 {
		t.Fatalf("another room: wait %s, %v", w, err)
	}
	// A burst allows that many at once, then waits.
	b := core.Limit{Rate: 3, Per: time.Minute, Burst: 3}
	for i := range 3 {
		if w, err := e.store.(core.Budget).Spend(t.Context(), "test:burst", b); err != nil || w != 0 {
			t.Fatalf("burst send %d: wait %s, %v", i, w, err)
		}
	}
	if w, _ := e.store.(core.Budget).Spend(t.Context(), "test:burst", b); w <= 0 {
		t.Fatal("a fourth send in the burst went ahead")
	}
	if _, err := e.store.(core.Budget).Spend(t.Context(), "test:bad", core.Limit{}); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("a zero limit: %v", err)
	}
}
