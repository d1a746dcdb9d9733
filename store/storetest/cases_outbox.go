package storetest

import (
	"strings"
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
		if _, err := e.store.Extend(t.Context(), core.SurfaceSlack, "a", []string{d.ID}); err != nil {
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
	if _, err := e.store.Extend(t.Context(), core.SurfaceSlack, "b", []string{d.ID}); err != nil {
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

func init() {
	register("DeliveriesGoOnlyToOutboxes", testDeliveriesNeedAnOutbox)
	register("ClaimNeedsAConsumer", testClaimNeedsAConsumer)
}

// testDeliveriesNeedAnOutbox: a delivery to a surface that has no outbox
// (the console, the API, a misspelt surface, none) could never be
// claimed, so it is refused as invalid wherever it is handed to the
// store (an enqueue, a create, a renotice, a commit), and nothing of
// what it came with is written.
func testDeliveriesNeedAnOutbox(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	for _, s := range []core.Surface{core.SurfaceConsole, core.SurfaceAPI, "Slack", ""} {
		bad := core.Delivery{Key: "k-" + string(s), Kind: core.DeliverPost, Surface: s, Room: "C1", CreatedAt: epoch}
		good := core.Delivery{Key: "k-good-" + string(s), Kind: core.DeliverPost, Surface: core.SurfaceSlack, Room: "C1", CreatedAt: epoch}
		if err := e.store.Enqueue(ctx, []core.Delivery{good, bad}); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("enqueue to %q: %v, want invalid", s, err)
		}

		q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "agent-a", RunID: "run-1",
			Text: "Which region?", Reversibility: core.Reversible, Route: core.DefaultRoute,
			CreatedAt: epoch, Deadline: epoch.Add(time.Hour), Timeout: core.Duration(time.Hour),
			OnTimeout: core.OnTimeoutDeny, State: core.StateOpen}
		asked := core.Event{QuestionID: q.ID, RunID: q.RunID, At: epoch, Kind: core.EventAsked}
		if err := e.store.Create(ctx, q, asked, []core.Delivery{good, bad}); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("create with a delivery to %q: %v, want invalid", s, err)
		}
		if _, err := e.store.Get(ctx, q.ID); core.ErrorCode(err) != core.CodeNotFound {
			t.Errorf("a refused create stored the question: %v", err)
		}

		open := e.ask(clarification("run-1"))
		read := e.get(open.ID)
		err := e.store.Renotify(ctx, core.Renotice{QuestionID: open.ID, Now: epoch, Count: true,
			Event:      core.Event{QuestionID: open.ID, At: epoch, Kind: core.EventReminded},
			Deliveries: []core.Delivery{good, bad}})
		if core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("renotice with a delivery to %q: %v, want invalid", s, err)
		}
		c := answerBy(t, read, "ada")
		c.Updates = append(c.Updates, core.Delivery{Key: "u-" + string(s), Kind: core.DeliverUpdate, Surface: s, Room: "C1",
			QuestionID: open.ID, Message: &core.MessageRef{Surface: s, Room: "C1", ID: "1"}, CreatedAt: epoch})
		if _, err := e.store.Commit(ctx, c); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("commit with an update to %q: %v, want invalid", s, err)
		}
		if got := e.get(open.ID); !got.Open() || got.Version != read.Version {
			t.Errorf("refused writes changed the question: %s at version %d, read at %d", got.State, got.Version, read.Version)
		}
	}
	// Nothing of the refused writes reached an outbox.
	for _, s := range core.OutboxSurfaces {
		for _, d := range e.claimAll(s, "c") {
			if strings.HasPrefix(d.Key, "k-") || strings.HasPrefix(d.Key, "u-") {
				t.Errorf("%s outbox holds %+v from a refused write", s, d)
			}
		}
	}
}

// testClaimNeedsAConsumer: a claim names its consumer, whose claims a
// retry, an extend and a take-over are about; one without is refused.
func testClaimNeedsAConsumer(t *testing.T, h Harness) {
	e := newEnv(t, h)
	e.enqueueOne("k-anon")
	if ds, err := e.store.Claim(t.Context(), core.SurfaceSlack, "", 10, time.Hour, 0); core.ErrorCode(err) != core.CodeInvalid || len(ds) != 0 {
		t.Fatalf("claim without a consumer: %+v, %v; want invalid", ds, err)
	}
	if d := e.claimOne("a", time.Hour, 0); d.Key != "k-anon" || d.Attempts != 1 {
		t.Fatalf("after a refused claim: %+v, want k-anon at its first attempt", d)
	}
}
