package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// tickBatch bounds how many due questions one tick handles; the next tick
// takes the rest.
const tickBatch = 200

// TickReport says what one pass of the timeout ticker did.
type TickReport struct {
	TimedOut, Escalated, Reasked int
	// Expired counts the questions of runs whose ending was cut short
	// that this pass expired (finishEndings).
	Expired int
}

// Tick finishes the ends of runs that were cut short (finishEndings)
// and applies the timeout policy to every open question whose deadline
// has passed. It may run in every replica at once: closes go through the
// chokepoint and extensions are conditional on the deadline they saw, so
// each timeout acts once.
func (s *Service) Tick(ctx context.Context) (TickReport, error) {
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
	ids, err := s.store.Due(ctx, now, tickBatch)
	if err != nil {
		return rep, errors.Join(append(errs, Internal("tick", err))...)
	}
	var away *Downtime // read once, at the first question due
	if len(ids) > 0 {
		away = s.lastDowntime(ctx)
	}
	for _, id := range ids {
		q, err := s.store.Get(ctx, id)
		if ErrorCode(err) == CodeNotFound {
			continue // purged meanwhile
		}
		if err != nil {
			errs = append(errs, Internal("tick "+string(id), err))
			continue
		}
		if !q.Open() || q.Deadline.After(now) {
			continue
		}
		route, _ := s.RouteOf(q)
		// The escalation route as configured now (allowed lets its
		// deciders in the same way); one a reload removed is no
		// escalation, and the question times out.
		esc, escalates := s.Route(route.EscalateTo)
		switch {
		case q.OnTimeout == OnTimeoutEscalate && q.Renotified == 0 && route.EscalateTo != "" && escalates:
			err = s.renotify(ctx, q, EventEscalated, "escalated to route "+esc.Name+" after the deadline passed",
				s.deliveries(q, esc, DeliverEscalate, "escalate", now), now)
			if err == nil {
				rep.Escalated++
			}
		case q.OnTimeout == OnTimeoutReask && q.Renotified < q.MaxReasks:
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
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
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

// awayKey is the Values key under which Boot records a downtime whose
// re-notification is not finished, with how far it has gone; awayLease
// is the lease that lets one replica at a time work through it.
const (
	awayKey   = "core:away"
	awayLease = "core:away:lease"
)

// awayRecord is a downtime whose open questions are still to be
// re-notified.
type awayRecord struct {
	// Since is the last heartbeat before the downtime; it names the
	// reminders' delivery keys, so a repeat after a crash is recognisable.
	Since time.Time `json:"since"`
	// Booted is when the bridge came back: questions asked later were
	// never missed and get no reminder.
	Booted time.Time `json:"booted"`
	// Cursor is the ListOpen position up to which reminders are stored.
	Cursor string `json:"cursor,omitempty"`
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

// catchUpPage is how many open questions CatchUp reads, and records its
// progress after; catchUpParallel is how many of their re-notifications
// (and of a reminder pass's reminders, Remind) are in flight at once
// (the embedded store commits concurrent ones together).
const (
	catchUpPage     = 100
	catchUpParallel = 8
)

// catchUpLease is how long a replica holds the catch-up without renewing
// it (it renews every page); a dead holder's share is taken over after it.
const catchUpLease = time.Minute

// CatchUp re-notifies the open questions that a downtime recorded by Boot
// left waiting, a page at a time, recording after each page how far it
// got, so a restart resumes rather than starts over. owner names the
// caller for the lease that keeps two replicas from doing the same work.
// It returns how many questions it reminded and whether the work is
// finished (false when another replica holds it, or on error: call again
// later). The reminders themselves go out through the outbox at each
// platform's pace, like any delivery.
func (s *Service) CatchUp(ctx context.Context, owner string) (reminded int, done bool, err error) {
	const op = "catch up"
	if raw, err := s.store.Value(ctx, awayKey); err != nil || raw == "" {
		return 0, err == nil, Internal(op, err) // nothing to catch up, without taking the lease
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
	for {
		held, err := s.lease(ctx, awayLease, owner, catchUpLease)
		if err != nil || !held {
			return reminded, false, Internal(op, err)
		}
		leased = true
		// The record is read under the lease, at every page: another
		// replica may have gone on, or finished and cleared it, while
		// this one waited or was slow, and its pages are not done twice.
		raw, err := s.store.Value(ctx, awayKey)
		if err != nil {
			return reminded, false, Internal(op, err)
		}
		if raw == "" {
			return reminded, true, Internal(op, s.store.Release(ctx, awayLease, owner))
		}
		var rec awayRecord
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			return reminded, false, Internal(op, fmt.Errorf("downtime record %q: %w", raw, err))
		}
		down := rec.Booted.Sub(rec.Since)
		reason := fmt.Sprintf("re-notified after askbridge was away for %s", down.Round(time.Second))
		purpose := "away" + rec.Since.Format("20060102T150405.000")
		qs, next, err := s.store.ListOpen(ctx, rec.Cursor, catchUpPage)
		if err != nil {
			return reminded, false, Internal(op, err)
		}
		n, err := s.remindAll(ctx, qs, rec.Booted, reason, purpose)
		reminded += n
		if err != nil {
			return reminded, false, err
		}
		if next == "" {
			if err := s.store.SetValue(ctx, awayKey, ""); err != nil {
				return reminded, false, Internal(op, err)
			}
			return reminded, true, Internal(op, s.store.Release(ctx, awayLease, owner))
		}
		rec.Cursor = next
		b, err := json.Marshal(rec)
		if err != nil {
			return reminded, false, Internal(op, err)
		}
		if err := s.store.SetValue(ctx, awayKey, string(b)); err != nil {
			return reminded, false, Internal(op, err)
		}
	}
}

// remindAll re-notifies the questions of one page that were open before
// booted, catchUpParallel at a time, and says how many it reminded. A
// question closed or purged meanwhile is skipped. Each re-notice is
// claimed (renotifyOnce), so a page that failed partway and is taken
// again reminds only those it had not; on a route that reminds, the
// claim of the reminder due now, which the re-notice stands for, is taken
// before it, so the route's own pass does not send it seconds later.
func (s *Service) remindAll(ctx context.Context, qs []*Question, booted time.Time, reason, purpose string) (int, error) {
	var (
		g        errgroup.Group
		mu       sync.Mutex
		reminded int
		errs     []error
	)
	g.SetLimit(catchUpParallel)
	retention := s.conf().cfg.Retention
	for _, q := range qs {
		if q.CreatedAt.After(booted) {
			continue // asked after the bridge came back: nothing was missed
		}
		if !q.Deadline.After(s.now()) {
			// Its deadline passed while the bridge was away: the ticker
			// times it out, asks it again or escalates it, and that tells
			// the rooms; a re-notice beside it would say it twice, or call
			// on people to answer what is about to close.
			continue
		}
		g.Go(func() error {
			now := s.now()
			route := s.routeOrNone(q)
			var (
				stored bool
				err    error
			)
			if k := route.dueReminder(q, now); k >= 1 {
				// The re-notice stands for the route's reminder due now:
				// its claim is taken first, so that no pass sends that
				// reminder beside it, even one running meanwhile. Held
				// already (sent before the downtime, at the cap) is no
				// matter: the re-notice goes out all the same.
				_, err = s.store.Lease(ctx, reminderClaim(q.ID, k), string(NewID(0)), reminderClaimTTL(q, now, retention))
			}
			if err == nil {
				stored, err = s.renotifyOnce(ctx, "away:"+purpose+":"+string(q.ID), q, reason, roomDeliveries(q, route, DeliverRemind, purpose, now), now, retention)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case stored:
				reminded++
			case err == nil, ErrorCode(err) == CodeNotFound:
			default:
				errs = append(errs, Internal("remind "+string(q.ID), err))
			}
			return nil // every error is kept, not the first alone
		})
	}
	_ = g.Wait()
	return reminded, errors.Join(errs...)
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
