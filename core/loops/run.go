package loops

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Intervals are the intervals of the background work Run does.
type Intervals struct {
	Tick      time.Duration // timeout ticker
	Heartbeat time.Duration // a beat at start, then one every Heartbeat; default core.HeartbeatInterval, which the downtime threshold's minimum assumes
	Purge     time.Duration // retention: a purge at start, then one every Purge; default 1h
	Remind    time.Duration // reminders of routes with remind_every; default 10s
}

// Run runs svc's ticker (core.Service.Tick), heartbeat (Beat), retention
// (Purge), reminders (Remind) and the catch-up after a downtime
// (CatchUp, which has work only while a downtime's re-notification is
// unfinished, whichever replica recorded it), until ctx ends (call
// svc.Boot first, once). Each runs beside the others (catchUpLoop,
// every), so none of them delays readiness, a tick or a beat; the
// heartbeat least of all, since a replica booting while it is stale
// takes it for a downtime. Each pass is the domain's; Run only times
// them. Errors of one pass are reported
// to onErr (from several goroutines at once) and the loop goes on: a
// store that is briefly away must not stop the bridge.
func Run(ctx context.Context, svc *core.Service, l Intervals, onErr func(error)) error {
	if l.Tick <= 0 {
		l.Tick = time.Second
	}
	if l.Heartbeat <= 0 {
		l.Heartbeat = core.HeartbeatInterval
	}
	if l.Purge <= 0 {
		l.Purge = time.Hour
	}
	if l.Remind <= 0 {
		l.Remind = 10 * time.Second
	}
	if onErr == nil {
		onErr = func(error) {}
	}
	var background sync.WaitGroup
	defer background.Wait()
	background.Go(func() { catchUpLoop(ctx, svc, l.Tick, onErr) })
	// Purges run at once and then every interval. The first purge does
	// not wait an interval: a bridge restarted more often than that (a crash
	// loop, frequent deploys) would never purge. It runs beside the ticker
	// and the heartbeat, so the first purge after a long while, which may
	// drop many questions, delays neither, nor readiness (Boot is done by
	// now; CatchUp goes on beside it). There is no lease, at start as
	// every interval after: each replica purges, and two purges at once drop
	// nothing twice (each store's purge checks its candidates in one atomic
	// step).
	background.Go(func() { every(ctx, l.Purge, true, svc.Purge, onErr) })
	// Reminder passes run every interval, beside the ticker and the
	// heartbeat: a pass makes two store writes per reminder due, and
	// the first after a long downtime may find thousands due, which must hold
	// up neither the timeouts nor the heartbeat (a replica booting meanwhile
	// reads a stale heartbeat as downtime).
	background.Go(func() { every(ctx, l.Remind, false, svc.Remind, onErr) })
	// The heartbeat has a goroutine of its own, so that no tick holds it
	// up: a tick may take long (a run's ending cut short expires all its
	// questions in one; a store failing over retries each call), and a
	// beat left stale past the downtime threshold meanwhile made a
	// replica booting then (a rolling deploy) re-notify every open
	// question and post "while you were away" digests for a bridge that
	// was up. Nor does a beat that hangs hold up the timeouts. The first
	// beat is at once: Boot's beat is the last one until then, and
	// between Boot and Run the program starts its surfaces (platforms'
	// logins and key reads, seconds each). Beating an interval after Run
	// started left a gap of that start-up plus an interval, over the
	// one interval the downtime threshold's minimum allows for, so a
	// replica booting in it, or this one restarted quickly, re-notified
	// every open question after a "downtime" of a bridge that was up.
	background.Go(func() {
		every(ctx, l.Heartbeat, true, func(ctx context.Context) (int, error) { return 0, svc.Beat(ctx) }, onErr)
	})
	tick := time.NewTicker(l.Tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			tickOnce(ctx, svc, onErr)
		}
	}
}

// ticker is the one call of core.Service tickOnce makes.
type ticker interface {
	Tick(ctx context.Context) (core.TickReport, error)
}

// tickOnce runs one pass of the timeout ticker and tells onErr what went
// wrong, and, once (the sweep ends there), that the sweep of cards after
// a change of the configuration stopped at its bound.
func tickOnce(ctx context.Context, svc ticker, onErr func(error)) {
	rep, err := svc.Tick(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		onErr(err)
	} else if rep.RefreshCut {
		onErr(errRefreshCut)
	}
}

// errRefreshCut is what an operator is told when the sweep of cards
// after a change of the configuration stopped at its bound (core's
// refreshTallies): the cards it did not reach are not wrong for long,
// only stale until their next edit.
var errRefreshCut = errors.New("the edit of cards whose tally a reload (or a start under another file) changed stopped at its bound: the cards of the open questions it did not reach show the new tally at their next edit (a vote, a reminder, the timeout)")

// catchUpLoop runs CatchUp every interval until ctx ends. A call that
// finds the catch-up finished, or nothing to catch up, is not the end of
// it: replicas booting together see the downtime on one of them alone,
// whose Boot may record it after another's first call found no record,
// and the replica working through it may die or be stopped partway (a
// rolling deploy), its lease then lapsing for another to go on from
// its record. A loop that returned once its call was done left that
// catch-up to no one until some replica restarted, and its open
// questions were not re-notified meanwhile. A call with nothing to do
// reads one value and takes no lease, as cheap as the tick beside it.
func catchUpLoop(ctx context.Context, svc *core.Service, interval time.Duration, onErr func(error)) {
	owner := string(core.NewID(0)) // a random name for this process, for the lease
	every(ctx, interval, true, func(ctx context.Context) (int, error) {
		n, _, err := svc.CatchUp(ctx, owner)
		return n, err
	}, onErr)
}

// every runs pass every interval until ctx ends, the first time at once
// if atOnce, and hands onErr what fails while ctx lives. Passes do not
// overlap: the ticker keeps one tick that fell due during a pass and
// drops the rest.
func every(ctx context.Context, interval time.Duration, atOnce bool, pass func(context.Context) (int, error), onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if atOnce {
			if _, err := pass(ctx); err != nil && ctx.Err() == nil {
				onErr(err)
			}
		}
		atOnce = true
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
