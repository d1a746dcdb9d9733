package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// tickBatch bounds how many due questions one tick handles; the next tick
// takes the rest. tickSpare is how many more it reads, so that due
// questions it cannot read or move (a record that does not decode, a
// close the store keeps refusing) hold up none behind them: each tick
// read the same first tickBatch, and a batch of those failing left every
// later question open past its deadline for as long as they failed.
const (
	tickBatch = 200
	tickSpare = 200
)

// TickReport says what one pass of the timeout ticker did.
type TickReport struct {
	TimedOut, Escalated, Reasked int
	// Expired counts the questions of runs whose ending was cut short
	// that this pass expired (finishEndings).
	Expired int
	// Refreshed counts the open questions whose cards this pass queued
	// an edit of, their tally changed by a reload or by a start under
	// another configuration (refresh.go); RefreshCut is set when the
	// sweep stopped at its bound, leaving the cards it did not reach to
	// show it at their next edit.
	Refreshed  int
	RefreshCut bool
}

// Tick finishes the ends of runs that were cut short (finishEndings)
// and applies the timeout policy to every open question whose deadline
// has passed, then runs this replica's part of the sweep of cards due
// after a change of the configuration (refreshTallies). It may run in every replica at once: closes
// go through the chokepoint and extensions are conditional on the
// deadline they saw, so each timeout acts once.
func (s *Service) Tick(ctx context.Context) (TickReport, error) {
	rep, err := s.timeouts(ctx)
	var rerr error
	rep.Refreshed, rep.RefreshCut, rerr = s.refreshTallies(ctx)
	return rep, errors.Join(err, rerr)
}

// timeouts is Tick's pass over the ended runs and the questions due.
func (s *Service) timeouts(ctx context.Context) (TickReport, error) {
	var rep TickReport
	now := s.now()
	// One question that cannot be read or moved must not hold up every
	// other timeout: its error is reported and the pass goes on.
	var errs []error
	// The ended runs first: a question of one whose deadline has passed
	// too is expired, which is what happened first, not timed out.
	expired, err := s.finishEndings(ctx, now)
	rep.Expired = expired
	if err != nil {
		errs = append(errs, err)
	}
	ids, err := s.store.Due(ctx, now, tickBatch+tickSpare)
	if err != nil {
		return rep, errors.Join(append(errs, Internal("tick", err))...)
	}
	var away *Downtime // read once, at the first question due
	start := 0
	if len(ids) > 0 {
		away = s.lastDowntime(ctx)
		// Every replica ticks over the same page: each starts at its
		// own place in it, so that, ticking together, they mostly move
		// different questions, and each finds closed what another has
		// been through, rather than all racing for the same ones.
		start = rand.IntN(len(ids))
	}
	handled := 0
	for i := range ids {
		if handled == tickBatch {
			break
		}
		id := ids[(start+i)%len(ids)]
		if err := s.timeoutOne(ctx, id, now, away, &rep); err != nil {
			errs = append(errs, err) // it takes none of the batch's room
			continue
		}
		handled++
	}
	return rep, errors.Join(errs...)
}

// timeoutOne applies the timeout policy to question id, due at now, and
// counts what it did in rep; away is the last downtime Boot recorded.
// Losing a race (to an answer, to another replica's tick) is no error.
func (s *Service) timeoutOne(ctx context.Context, id QuestionID, now time.Time, away *Downtime, rep *TickReport) error {
	q, err := s.store.Get(ctx, id)
	if ErrorCode(err) == CodeNotFound {
		return nil // purged meanwhile
	}
	if err != nil {
		return Internal("tick "+string(id), err)
	}
	if !q.Open() || q.Deadline.After(now) {
		return nil
	}
	route, _ := s.RouteOf(q)
	esc, escalates := s.escalation(route)
	switch AtDeadline(q, escalates) {
	case OnTimeoutEscalate:
		err = s.renotify(ctx, q, EventEscalated, "escalated to route "+esc.Name+" after the deadline passed",
			s.deliveries(q, esc, DeliverEscalate, "escalate", now), now)
		if err == nil {
			rep.Escalated++
		}
	case OnTimeoutReask:
		purpose := fmt.Sprintf("reask%d", q.Renotified+1)
		err = s.renotify(ctx, q, EventReminded, fmt.Sprintf("asked again after the deadline passed (%d of %d)", q.Renotified+1, q.MaxReasks),
			s.deliveries(q, route, DeliverRemind, purpose, now), now)
		if err == nil {
			rep.Reasked++
		}
	default:
		_, err = s.resolve(ctx, attempt{op: "timeout", id: q.ID, door: doorSystem, actor: System,
			build: func(q *Question, now time.Time) (Transition, error) {
				// The reason is the question's as the close finds it,
				// with the votes or parts that came after the read
				// above, and whether askbridge was down when its
				// deadline passed.
				var down *Downtime
				if away.Covers(q.Deadline) {
					down = away
				}
				t, err := s.systemClose(StateTimedOut, CloserTimeout, System, TimeoutReasonOf(q)+AwayNote(down))(q, now)
				t.Resolution.Away = down
				return t, err
			}})
		if err == nil {
			rep.TimedOut++
		}
	}
	// Losing a race to an answer or to another replica's tick is the
	// normal case of running the ticker everywhere.
	if err != nil && !errors.Is(err, ErrClosed) && ErrorCode(err) != CodeConflict && ErrorCode(err) != CodeNotFound {
		return err
	}
	return nil
}

// AtDeadline is what q's next deadline does, the one rule of it for the
// ticker (Tick) and for whoever tells it ahead (the console's deadline
// line): escalate once, while escalates (q's route names an escalation
// route configured now: Service.EscalationOf); ask again while q has
// asks left (MaxReasks); else close it as timed out, as the deny policy
// does. q's own policy alone would say "escalate" of a question
// escalated already, whose next deadline closes it.
func AtDeadline(q *Question, escalates bool) TimeoutPolicy {
	switch {
	case q.OnTimeout == OnTimeoutEscalate && q.Renotified == 0 && escalates:
		return OnTimeoutEscalate
	case q.OnTimeout == OnTimeoutReask && q.Renotified < q.MaxReasks:
		return OnTimeoutReask
	}
	return OnTimeoutDeny
}

// EscalationOf is the route q escalates to, as configured now, and
// whether it has one (AtDeadline's escalates).
func (s *Service) EscalationOf(q *Question) (Route, bool) {
	route, _ := s.RouteOf(q)
	return s.escalation(route)
}

// escalation is the route route escalates to as configured now (allowed
// lets its deciders in the same way), and whether there is one: one a
// reload removed is no escalation, and the question times out.
func (s *Service) escalation(route Route) (Route, bool) {
	if route.EscalateTo == "" {
		return Route{}, false
	}
	return s.Route(route.EscalateTo)
}

// renotify extends a timed-out question's deadline by its timeout, counts
// the extension and posts it again, if nobody else did so first.
func (s *Service) renotify(ctx context.Context, q *Question, kind EventKind, reason string, out []Delivery, now time.Time) error {
	return s.store.Renotify(ctx, Renotice{
		QuestionID: q.ID,
		IfDeadline: q.Deadline,
		Deadline:   now.Add(time.Duration(q.Timeout)),
		Count:      true,
		Event:      s.systemEvent(q, kind, reason, now),
		Deliveries: out,
		Now:        now,
	})
}

// systemEvent is an event askbridge itself records on q (a reminder, a
// reask), its actor the system's pseudonym.
func (s *Service) systemEvent(q *Question, kind EventKind, reason string, now time.Time) Event {
	return Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: kind, Actor: s.pseudonym(System), Surface: SurfaceSystem, Reason: reason}
}

// BootReport says what Boot found and did.
type BootReport struct {
	// LastBeat is the previous heartbeat; zero on a first start.
	LastBeat time.Time
	// Down is how long the bridge was away, when over the threshold: the
	// open questions are then due to be re-notified, which CatchUp does
	// in the background (core/loops' Run starts it).
	Down    time.Duration
	Digests int
	// At is the beat Boot wrote (Unboot's to take back).
	At time.Time
}

// Boot runs once at start: it swaps the heartbeat and, if the bridge was
// away longer than the threshold, records the downtime (CatchUp then
// re-notifies every open question, in bounded batches, while the bridge
// already serves) and enqueues the "while you were away" digests
// (awayDigests). Of several replicas booting together only the first sees
// the old beat, so this happens once. Boot does a bounded amount of work
// whatever the number of open questions, so the bridge is ready at once.
func (s *Service) Boot(ctx context.Context) (BootReport, error) {
	const op = "boot"
	now := s.now()
	prev, err := s.store.Beat(ctx, now)
	if err != nil {
		return BootReport{}, Internal(op, err)
	}
	rep := BootReport{LastBeat: prev, At: now}
	// If recording the downtime fails, put the old beat back, so the next
	// boot sees the downtime and records it (repeats carry the same
	// delivery keys, so they are recognisable).
	restore := func(err error) (BootReport, error) {
		if _, berr := s.store.Beat(context.WithoutCancel(ctx), prev); berr != nil {
			err = errors.Join(err, Internal(op, berr))
		}
		return rep, err
	}
	if prev.IsZero() || now.Sub(prev) <= s.conf().cfg.DowntimeThreshold {
		return rep, nil
	}
	rep.Down = now.Sub(prev)
	rec, err := json.Marshal(awayRecord{Since: prev, Booted: now})
	if err != nil {
		return restore(Internal(op, err))
	}
	if err := s.store.SetValue(ctx, awayKey, string(rec)); err != nil {
		return restore(Internal(op, err))
	}
	if err := s.store.SetValue(ctx, lastAwayKey, string(rec)); err != nil {
		return restore(Internal(op, err))
	}
	digests := s.awayDigests(prev, now)
	if len(digests) > 0 {
		if err := s.store.Enqueue(ctx, digests); err != nil {
			return restore(Internal(op, err))
		}
	}
	rep.Digests = len(digests)
	return rep, nil
}

// Unboot takes back Boot's beat after a start that failed once Boot had
// run (the port taken, a platform refusing its token): the bridge served
// nothing. A start crash-looping every few seconds would otherwise keep
// the beat fresh through hours of downtime, and the start that finally
// served would see none and re-notify no one. The beat before Boot goes
// back, unless another replica has beaten since (the bridge was up,
// there): then that beat stays. A downtime Boot recorded stays recorded;
// the next boot records it again, under the same delivery keys.
func (s *Service) Unboot(ctx context.Context, rep BootReport) error {
	if rep.LastBeat.IsZero() {
		return nil // a first start: nothing was open before it
	}
	cur, err := s.store.Beat(ctx, rep.LastBeat)
	if err != nil {
		return Internal("unboot", err)
	}
	// The stores keep a beat to the millisecond at least.
	if cur.Truncate(time.Millisecond).Equal(rep.At.Truncate(time.Millisecond)) {
		return nil
	}
	if _, err := s.store.Beat(ctx, cur); err != nil {
		return Internal("unboot", err)
	}
	return nil
}

// CatchUp re-notifies the open questions that a downtime recorded by Boot
// left waiting, a page at a time, recording after each page how far it
// got, so a restart resumes rather than starts over. owner names the
// caller for the lease that keeps two replicas from doing the same work.
// It returns how many questions it reminded and whether the work is
// finished (false when another replica holds it, on error, or while a
// failed re-notice waits to be tried again: call again later). The
// reminders themselves go out through the outbox at each platform's
// pace, like any delivery.
//
// A question whose re-notice fails does not stop the listing: it is kept
// in the record and tried again, with a pause growing between tries, up
// to catchUpTries times; then it is given up on, and its event log and
// the error returned say so (law 8). A call tries the retries that are
// due before it lists on, so that they are given up on in time even
// while the listing waits for room in the record (catchUpRetries).
func (s *Service) CatchUp(ctx context.Context, owner string) (reminded int, done bool, err error) {
	const op = "catch up"
	raw, err := s.store.Value(ctx, awayKey)
	if err != nil || raw == "" {
		return 0, err == nil, Internal(op, err) // nothing to catch up, without taking the lease
	}
	if rec, err := parseAway(raw); err == nil && rec.waiting(s.now()) {
		return 0, false, nil // its retries' pause is not over
	}
	leased := false
	defer func() {
		// Failed or stopped partway: the lease goes back now, so another
		// replica goes on at once rather than when it lapses. The record
		// says how far this one got.
		if leased && !done {
			rctx, cancel := Settle(ctx)
			defer cancel()
			_ = s.store.Release(rctx, awayLease, owner) // a release lost only waits out the lease
		}
	}()
	var (
		failed []error // re-notices that failed, each kept for a later try
		listed bool    // this call listed a page: retries wait for the next
	)
	// stop ends the call unfinished, with the re-notices that failed on
	// it and err (nil or not).
	stop := func(err error) (int, bool, error) {
		return reminded, false, errors.Join(append(failed, Internal(op, err))...)
	}
	for {
		held, err := s.lease(ctx, awayLease, owner, catchUpLease)
		if err != nil || !held {
			return stop(err)
		}
		leased = true
		// The record is read under the lease, at every page: another
		// replica may have gone on, or finished and cleared it, while
		// this one waited or was slow, and its pages are not done twice.
		raw, err := s.store.Value(ctx, awayKey)
		if err != nil {
			return stop(err)
		}
		if raw == "" {
			return reminded, len(failed) == 0, s.finishCatchUp(ctx, owner, failed)
		}
		rec, err := parseAway(raw)
		if err != nil {
			return stop(err)
		}
		down := rec.Booted.Sub(rec.Since)
		p := awayPass{
			reason:  fmt.Sprintf("re-notified after askbridge was away for %s", down.Round(time.Second)),
			purpose: "away" + rec.Since.Format("20060102T150405.000"),
			booted:  rec.Booted,
		}
		switch {
		case !listed && rec.due(s.now()):
			n, errs := s.retryAway(ctx, &rec, p)
			reminded += n
			failed = append(failed, errs...)
		case !rec.Listed:
			qs, next, err := s.store.ListOpen(ctx, rec.Cursor, catchUpPage)
			if err != nil {
				return stop(err)
			}
			n, bad := s.remindAll(ctx, qs, p)
			reminded += n
			failed = append(failed, bad.errs()...)
			if len(rec.Retry)+len(bad) > catchUpRetries {
				// Too many failing to keep each: the store is failing
				// for more than a few questions, and the page is taken
				// again later (its claims remind no one twice), once
				// the retries kept have made room.
				return stop(nil)
			}
			now := s.now()
			for _, f := range bad {
				rec.Retry = append(rec.Retry, awayRetry{ID: f.id, Tries: 1, After: now.Add(retryAfter(1)), Reminder: f.reminder})
			}
			rec.Cursor, rec.Listed, listed = next, next == "", true
		case len(rec.Retry) == 0:
			if err := s.store.SetValue(ctx, awayKey, ""); err != nil {
				return stop(err)
			}
			return reminded, len(failed) == 0, s.finishCatchUp(ctx, owner, failed)
		default:
			// Listed, and what is left waits: for its pause, or, failed
			// on this call's pages, for the next call.
			return stop(nil)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return stop(err)
		}
		if err := s.store.SetValue(ctx, awayKey, string(b)); err != nil {
			return stop(err)
		}
	}
}

// finishCatchUp ends a catch-up whose record is gone: the lease goes back
// here when it is done; with failed (re-notices given up on this call)
// it is not done, for the caller to hear of them, and the deferred
// release in CatchUp gives the lease back.
func (s *Service) finishCatchUp(ctx context.Context, owner string, failed []error) error {
	if len(failed) > 0 {
		return errors.Join(failed...)
	}
	return Internal("catch up", s.store.Release(ctx, awayLease, owner))
}

// Beat records that the bridge is up.
func (s *Service) Beat(ctx context.Context) error {
	_, err := s.store.Beat(ctx, s.now())
	return Internal("heartbeat", err)
}

// Purge drops closed questions older than the retention period, with their
// events, and returns how many went.
func (s *Service) Purge(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.conf().cfg.Retention)
	total := 0
	for {
		n, err := s.store.Purge(ctx, cutoff, 500)
		total += n
		if err != nil {
			return total, Internal("purge", err)
		}
		if n < 500 {
			return total, nil
		}
	}
}
