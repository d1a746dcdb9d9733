package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// digestCourier records the rooms digests are posted to.
type digestCourier struct{ digests []core.Digest }

func (c *digestCourier) Surface() core.Surface { return core.SurfaceSlack }
func (c *digestCourier) Post(_ context.Context, _ *core.Question, m core.MessageRef) (core.MessageRef, error) {
	m.ID = "m1"
	return m, nil
}
func (c *digestCourier) Update(context.Context, *core.Question, core.MessageRef) error { return nil }
func (c *digestCourier) Remind(context.Context, *core.Question, string) error          { return nil }
func (c *digestCourier) Digest(_ context.Context, d core.Digest, _ string) error {
	c.digests = append(c.digests, d)
	return nil
}

// downtime is a service on a simulated clock whose route ops posts to
// Slack room C1, booted once.
type downtime struct {
	t     *testing.T
	st    core.Store
	clock *core.SimClock
	svc   *core.Service
}

func newDowntime(t *testing.T) downtime {
	st := coretest.OpenStore(t)
	clock := core.NewSimClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	route := core.Route{Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C1"}},
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}}}
	svc, err := core.New(st, reloadConfig(map[string]core.Route{"ops": route}), clock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Boot(t.Context()); err != nil {
		t.Fatal(err)
	}
	return downtime{t, st, clock, svc}
}

func (d downtime) ask(timeout time.Duration, policy core.TimeoutPolicy) *core.Question {
	d.t.Helper()
	in := core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
		Reversibility: core.Reversible, Route: "ops", Timeout: timeout, OnTimeout: policy}
	if policy == core.OnTimeoutReask {
		in.MaxReasks = 2
	}
	q, err := d.svc.Ask(d.t.Context(), in)
	if err != nil {
		d.t.Fatal(err)
	}
	return q
}

// away beats, then lets the clock run for a while the bridge is down.
func (d downtime) away(gone time.Duration) {
	d.t.Helper()
	if err := d.svc.Beat(d.t.Context()); err != nil {
		d.t.Fatal(err)
	}
	d.clock.Advance(gone)
}

// deliveries claims what is queued for Slack and sends the digests
// through c.
func (d downtime) deliveries(c *digestCourier) []core.Delivery {
	d.t.Helper()
	ds, err := d.st.Claim(d.t.Context(), core.SurfaceSlack, "c", 100, 0, 0)
	if err != nil {
		d.t.Fatal(err)
	}
	for _, dl := range ds {
		if dl.Kind == core.DeliverDigest {
			if err := d.svc.DeliverOne(d.t.Context(), c, dl, nil); err != nil {
				d.t.Fatal(err)
			}
		}
	}
	return ds
}

// TestAReaskDueAfterDowntimeIsPostedOnce: a question whose deadline
// passed while the bridge was away is asked again by the ticker, which
// tells the room; the catch-up does not re-notify it beside that. Before,
// the room got "re-notified after askbridge was away" and "asked again
// after the deadline passed" for one question and one downtime.
func TestAReaskDueAfterDowntimeIsPostedOnce(t *testing.T) {
	d := newDowntime(t)
	d.ask(time.Hour, core.OnTimeoutReask)
	d.away(2 * time.Hour)
	ctx := t.Context()
	if _, err := d.svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.svc.CatchUp(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	reminds := 0
	for _, dl := range d.deliveries(&digestCourier{}) {
		if dl.Kind == core.DeliverRemind && dl.Room == "C1" {
			reminds++
		}
	}
	if reminds != 1 {
		t.Errorf("room C1 got %d reminders of one question for one downtime; want the reask's alone", reminds)
	}
}

// TestADigestIsPostedOnceAfterAFailedStart: a start that fails after Boot
// (Unboot) leaves its digests queued, and the next start queues them again
// under the same keys; the room gets one. Before, it got one per start.
func TestADigestIsPostedOnceAfterAFailedStart(t *testing.T) {
	d := newDowntime(t)
	d.ask(24*time.Hour, core.OnTimeoutDeny)
	d.away(2 * time.Hour)
	ctx := t.Context()
	rep, err := d.svc.Boot(ctx) // the start that fails
	if err != nil || rep.Down == 0 {
		t.Fatal(rep, err)
	}
	if err := d.svc.Unboot(ctx, rep); err != nil {
		t.Fatal(err)
	}
	d.clock.Advance(5 * time.Second)
	if _, err := d.svc.Boot(ctx); err != nil { // the start that serves
		t.Fatal(err)
	}
	c := &digestCourier{}
	d.deliveries(c)
	if len(c.digests) != 1 {
		t.Errorf("room got %d 'while you were away' digests for one downtime", len(c.digests))
	}
}

// TestADigestListsWhatTimedOutBecauseOfTheDowntime: a question whose
// deadline passed while the bridge was away is timed out by its first
// tick, and the digest lists it among the closes; nor is it re-notified
// first. Before, it was reminded, then timed out a second later, and
// left out of a digest that, with nothing else to say, was not posted.
func TestADigestListsWhatTimedOutBecauseOfTheDowntime(t *testing.T) {
	d := newDowntime(t)
	q := d.ask(time.Hour, core.OnTimeoutDeny)
	d.clock.Advance(10 * time.Minute)
	d.away(2 * time.Hour)
	ctx := t.Context()
	if _, err := d.svc.Boot(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _, err := d.svc.CatchUp(ctx, "a"); err != nil || n != 0 {
		t.Errorf("the catch-up re-notified %d, %v; want none: the question is about to time out", n, err)
	}
	d.clock.Advance(time.Second)
	if tr, err := d.svc.Tick(ctx); err != nil || tr.TimedOut != 1 {
		t.Fatalf("tick: %+v, %v", tr, err)
	}
	d.clock.Advance(time.Second) // the drain, after the tick
	c := &digestCourier{}
	d.deliveries(c)
	if len(c.digests) != 1 || len(c.digests[0].Closed) != 1 || c.digests[0].Closed[0].ID != q.ID {
		t.Errorf("digests %+v; want one listing the question that timed out", c.digests)
	}
}
