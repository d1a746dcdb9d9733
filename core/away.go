package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Downtime is a span in which askbridge was not running: from the last
// heartbeat before it to the boot after it. A deadline that passed in it
// passed when no answer could be taken, and a timeout says so (laws 8
// and 12, honest recovery and the truth about the closer: "nobody
// answered" alone would blame the people).
type Downtime struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
}

// Covers reports whether t fell in the downtime (after its last beat, up
// to the boot). A nil Downtime covers nothing.
func (d *Downtime) Covers(t time.Time) bool {
	return d != nil && t.After(d.Since) && !t.After(d.Until)
}

// AwayNote is what a timeout's reason and its card add when its deadline
// passed in d; "" for none.
func AwayNote(d *Downtime) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("; it passed while askbridge was not running (for %s), when no answer could be taken",
		d.Until.Sub(d.Since).Round(time.Second))
}

// lastAwayKey is the Values key under which Boot keeps the last downtime
// it found (an awayRecord without a cursor), for the ticker: the catch-up
// record under awayKey is cleared once its re-notices are stored, which
// may come before the tick that times out what passed its deadline then.
// Every replica's ticker reads it, so whichever times a question out
// words it the same.
const lastAwayKey = "core:away:last"

// lastDowntime is the last downtime Boot recorded, nil if none (or if it
// cannot be read now: the timeout then reads as any other, which is the
// lesser fault than not timing out).
func (s *Service) lastDowntime(ctx context.Context) *Downtime {
	raw, err := s.store.Value(ctx, lastAwayKey)
	if err != nil || raw == "" {
		return nil
	}
	var rec awayRecord
	if json.Unmarshal([]byte(raw), &rec) != nil {
		return nil
	}
	return &Downtime{Since: rec.Since, Until: rec.Booted}
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
	// Listed is set once the listing has reached its end: what is left
	// to do is Retry.
	Listed bool `json:"listed,omitempty"`
	// Retry are the questions whose re-notice failed, to be tried again
	// (awayRetry), so that one question the store cannot re-notify (its
	// shard failing over, say) holds up none of those listed after it.
	Retry []awayRetry `json:"retry,omitempty"`
}

// awayRetry is a question whose re-notice after the downtime failed.
type awayRetry struct {
	ID QuestionID `json:"id"`
	// Tries is how many times its re-notice has failed.
	Tries int `json:"tries"`
	// After is when it is due to be tried again.
	After time.Time `json:"after"`
	// Reminder is the route's reminder that its last try claimed
	// (remindAll), 0 for none: given up on, the re-notice stands for it
	// no more, and gaveUpRenotice gives its claim back for the route's
	// own pass to send it.
	Reminder int `json:"reminder,omitempty"`
}

// waiting reports whether all that is left of the record is retries not
// due yet at now: a call then has nothing to do, and takes no lease.
func (r awayRecord) waiting(now time.Time) bool {
	return r.Listed && len(r.Retry) > 0 && !r.due(now)
}

// due reports whether a retry is due at now.
func (r awayRecord) due(now time.Time) bool {
	return slices.ContainsFunc(r.Retry, func(a awayRetry) bool { return !a.After.After(now) })
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

// A re-notice that failed is tried again by the next call (core/loops
// calls every second), then after catchUpBackoff, doubled after each
// failure, and given up after catchUpTries failures (about five minutes,
// long enough for a store's failover): the caller retries every second,
// and without a pause of its own one broken question would cost a write
// a second for as long as the bridge runs. At most catchUpRetries
// questions wait to be retried, which bounds the record: past that the
// store is failing for more than a few questions, and the page is taken
// again later, as a whole, once the retries (tried meanwhile) have made
// room.
const (
	catchUpTries   = 8
	catchUpBackoff = 5 * time.Second
	catchUpRetries = catchUpPage
)

// retryAfter is the pause before the next try of a re-notice that has
// failed tries times.
func retryAfter(tries int) time.Duration {
	if tries <= 1 {
		return 0
	}
	return catchUpBackoff << min(tries-2, 10)
}

// parseAway reads a downtime record.
func parseAway(raw string) (awayRecord, error) {
	var rec awayRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return rec, fmt.Errorf("downtime record %q: %w", raw, err)
	}
	return rec, nil
}

// awayPass is what every re-notice of one downtime says and is keyed by.
type awayPass struct {
	reason, purpose string
	booted          time.Time
}

// claim names the claim of id's re-notice after this downtime, and is
// the owner under which that re-notice claims the route's reminder it
// stands for (remindAll): one fixed for the question and the downtime, so
// that every try, on any replica and after a restart, renews the
// reminder's claim as its own and the give-up can hand it back
// (gaveUpRenotice). That claim keeps out the route's pass alone; two
// catch-ups of one question are kept apart by the re-notice's own claim.
func (p awayPass) claim(id QuestionID) string { return "away:" + p.purpose + ":" + string(id) }

// renoticeFailure is a question whose re-notice failed, and why;
// reminder is the route's reminder its try claimed, 0 for none.
type renoticeFailure struct {
	id       QuestionID
	err      error
	reminder int
}

type renoticeFailures []renoticeFailure

func (fs renoticeFailures) errs() []error {
	out := make([]error, 0, len(fs))
	for _, f := range fs {
		out = append(out, Internal("remind "+string(f.id), f.err))
	}
	return out
}

// retryAway tries again the re-notices of rec.Retry that are due: those
// stored, or no longer due (closed, gone, their deadline passed), leave
// the list; those that fail again wait longer, or are given up on after
// catchUpTries, with an undelivered event in the question's log. It
// returns how many it reminded and an error for each that failed.
func (s *Service) retryAway(ctx context.Context, rec *awayRecord, p awayPass) (int, []error) {
	now := s.now()
	var (
		qs      []*Question
		bad     = map[QuestionID]error{}
		waiting []awayRetry
	)
	for _, r := range rec.Retry {
		if r.After.After(now) {
			waiting = append(waiting, r)
			continue
		}
		switch q, err := s.store.Get(ctx, r.ID); {
		case ErrorCode(err) == CodeNotFound:
		case err != nil:
			bad[r.ID] = err
		case q.Open():
			qs = append(qs, q)
		}
	}
	n, failed := s.remindAll(ctx, qs, p)
	reminders := map[QuestionID]int{}
	for _, f := range failed {
		bad[f.id] = f.err
		reminders[f.id] = f.reminder
	}
	var errs []error
	for _, r := range rec.Retry {
		err, ok := bad[r.ID]
		if !ok || r.After.After(now) {
			continue
		}
		if k := reminders[r.ID]; k > 0 {
			// The latest claimed is the one the route's pass would send:
			// it sends only the reminder due now.
			r.Reminder = k
		}
		r.Tries++
		if r.Tries < catchUpTries {
			r.After = now.Add(retryAfter(r.Tries))
			waiting = append(waiting, r)
			errs = append(errs, Internal("catch up", fmt.Errorf("re-notice of question %s failed %d times, tried again in %s: %w", r.ID, r.Tries, retryAfter(r.Tries), err)))
			continue
		}
		errs = append(errs, s.gaveUpRenotice(ctx, r, p, err, now))
	}
	rec.Retry = waiting
	return n, errs
}

// gaveUpRenotice records in r's question's log that its re-notice after
// the downtime was given up on, so nobody reads the catch-up as having
// told everyone (law 8), and returns the error that says so to the log.
// The route's reminder that the re-notice claimed goes back to the
// route's pass (nothing, if that pass claimed it first), and this
// replica's pass forgets having seen it claimed: held, it was never sent
// while the question stayed open.
func (s *Service) gaveUpRenotice(ctx context.Context, r awayRetry, p awayPass, cause error, now time.Time) error {
	err := fmt.Errorf("re-notice of question %s after the downtime given up after %d failed tries: %w", r.ID, r.Tries, cause)
	actx, cancel := Settle(ctx)
	defer cancel()
	if r.Reminder > 0 {
		if rerr := s.store.Release(actx, reminderClaim(r.ID, r.Reminder), p.claim(r.ID)); rerr != nil {
			err = fmt.Errorf("%w; its reminder %d stays claimed, unsent: %w", err, r.Reminder, rerr)
		}
		s.reminders.forget(r.ID)
	}
	s.appendAside(actx, Event{QuestionID: r.ID, At: now, Kind: EventUndelivered, Actor: s.pseudonym(System),
		Surface: SurfaceSystem, Reason: cutReason(err.Error())})
	return Internal("catch up", err)
}

// remindAll re-notifies the questions of one page that were open before
// p.booted, catchUpParallel at a time, and says how many it reminded and
// which failed. A question closed or purged meanwhile is skipped. Each
// re-notice is claimed (renotifyOnce), so a page that failed partway and
// is taken again reminds only those it had not; on a route that reminds,
// the claim of the reminder due now, which the re-notice stands for, is
// taken before it, so the route's own pass does not send it seconds
// later. That claim is taken under the pass's owner for the question
// (awayPass.claim), so a retry renews it, and a give-up hands it back.
func (s *Service) remindAll(ctx context.Context, qs []*Question, p awayPass) (int, renoticeFailures) {
	var (
		g        errgroup.Group
		mu       sync.Mutex
		reminded int
		failed   renoticeFailures
	)
	g.SetLimit(catchUpParallel)
	retention := s.conf().cfg.Retention
	for _, q := range qs {
		if q.CreatedAt.After(p.booted) {
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
			k := route.dueReminder(q, now)
			if k >= 1 {
				// The re-notice stands for the route's reminder due now:
				// its claim is taken first, so that no pass sends that
				// reminder beside it, even one running meanwhile. Held
				// already (sent before the downtime, at the cap) is no
				// matter: the re-notice goes out all the same.
				_, err = s.store.Lease(ctx, reminderClaim(q.ID, k), p.claim(q.ID), reminderClaimTTL(q, now, retention))
			}
			if err == nil {
				stored, err = s.renotifyOnce(ctx, p.claim(q.ID), q, p.reason, roomDeliveries(q, route, DeliverRemind, p.purpose, now), now, retention)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case stored:
				reminded++
			case err == nil, ErrorCode(err) == CodeNotFound:
			default:
				failed = append(failed, renoticeFailure{id: q.ID, err: err, reminder: k})
			}
			return nil // every failure is kept, not the first alone
		})
	}
	_ = g.Wait()
	return reminded, failed
}
