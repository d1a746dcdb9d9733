package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// tickBatch bounds how many due questions one tick handles; the next tick
// takes the rest.
const tickBatch = 200

// TickReport says what one pass of the timeout ticker did.
type TickReport struct {
	TimedOut, Escalated, Reasked int
}

// Tick applies the timeout policy to every open question whose deadline
// has passed. It may run in every replica at once: closes go through the
// chokepoint and extensions are conditional on the deadline they saw, so
// each timeout acts once.
func (s *Service) Tick(ctx context.Context) (TickReport, error) {
	var rep TickReport
	now := s.now()
	ids, err := s.store.Due(ctx, now, tickBatch)
	if err != nil {
		return rep, Internal("tick", err)
	}
	// One question that cannot be read or moved must not hold up every
	// other timeout: its error is reported and the pass goes on.
	var errs []error
	for _, id := range ids {
		q, err := s.store.Get(ctx, id)
		if ErrorCode(err) == CodeNotFound {
			continue // purged meanwhile
		}
		if err != nil {
			errs = append(errs, Internal("tick "+id, err))
			continue
		}
		if !q.Open() || q.Deadline.After(now) {
			continue
		}
		route := s.cfg.Routes[q.Route]
		switch {
		case q.OnTimeout == OnTimeoutEscalate && q.Renotified == 0 && route.EscalateTo != "":
			esc := s.cfg.Routes[route.EscalateTo]
			err = s.renotify(ctx, q, EventEscalated, "escalated to route "+esc.Name+" after the deadline passed",
				roomDeliveries(q, esc, DeliverEscalate, "escalate", now), now)
			if err == nil {
				rep.Escalated++
			}
		case q.OnTimeout == OnTimeoutReask && q.Renotified < q.MaxReasks:
			purpose := fmt.Sprintf("reask%d", q.Renotified+1)
			err = s.renotify(ctx, q, EventReminded, fmt.Sprintf("asked again after the deadline passed (%d of %d)", q.Renotified+1, q.MaxReasks),
				roomDeliveries(q, route, DeliverRemind, purpose, now), now)
			if err == nil {
				rep.Reasked++
			}
		default:
			_, err = s.resolve(ctx, attempt{op: "timeout", id: q.ID, door: doorSystem, actor: System,
				build: s.systemClose(StateTimedOut, System, TimeoutReason)})
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
	_, err := s.store.Renotify(ctx, Renotice{
		QuestionID: q.ID,
		IfDeadline: q.Deadline,
		Deadline:   now.Add(time.Duration(q.Timeout)),
		Count:      true,
		Event: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: kind,
			Actor: s.pseudonym(System), Surface: SurfaceSystem, Reason: reason},
		Deliveries: out,
		Now:        now,
	})
	return err
}

// BootReport says what Boot found and did.
type BootReport struct {
	// LastBeat is the previous heartbeat; zero on a first start.
	LastBeat time.Time
	// Down is how long the bridge was away, when over the threshold.
	Down     time.Duration
	Reminded int
	Digests  int
}

// Boot runs once at start: it swaps the heartbeat and, if the bridge was
// away longer than the threshold, re-notifies every open question and
// enqueues one "while you were away" digest per room of each route. Of
// several replicas booting together only the first sees the old beat, so
// this happens once.
func (s *Service) Boot(ctx context.Context) (BootReport, error) {
	const op = "boot"
	now := s.now()
	prev, err := s.store.Beat(ctx, now)
	if err != nil {
		return BootReport{}, Internal(op, err)
	}
	rep := BootReport{LastBeat: prev}
	// If the re-notifying below fails part way, put the old beat back, so
	// the next boot sees the downtime and finishes the job (repeats carry
	// the same delivery keys, so they are recognisable).
	restore := func(err error) (BootReport, error) {
		if _, berr := s.store.Beat(context.WithoutCancel(ctx), prev); berr != nil {
			err = errors.Join(err, Internal(op, berr))
		}
		return rep, err
	}
	if prev.IsZero() || now.Sub(prev) <= s.cfg.DowntimeThreshold {
		return rep, nil
	}
	rep.Down = now.Sub(prev)
	reason := fmt.Sprintf("re-notified after askbridge was away for %s", rep.Down.Round(time.Second))
	cursor := ""
	for {
		qs, next, err := s.store.ListOpen(ctx, cursor, 100)
		if err != nil {
			return restore(Internal(op, err))
		}
		for _, q := range qs {
			route := s.cfg.Routes[q.Route]
			_, err := s.store.Renotify(ctx, Renotice{
				QuestionID: q.ID,
				Event: Event{QuestionID: q.ID, RunID: q.RunID, At: now, Kind: EventReminded,
					Actor: s.pseudonym(System), Surface: SurfaceSystem, Reason: reason},
				Deliveries: roomDeliveries(q, route, DeliverRemind, "away"+prev.Format("20060102T150405.000"), now),
				Now:        now,
			})
			switch {
			case err == nil:
				rep.Reminded++
			case errors.Is(err, ErrClosed):
			default:
				return restore(Internal(op, err))
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	var digests []Delivery
	for _, name := range s.sortedRouteNames() {
		route := s.cfg.Routes[name]
		for _, room := range route.Rooms {
			digests = append(digests, Delivery{
				Key:     fmt.Sprintf("digest:%s:%s:%s:%s", name, room.Surface, room.ID, prev.Format(time.RFC3339Nano)),
				Kind:    DeliverDigest,
				Surface: room.Surface, Room: room.ID, Route: name, Since: prev, CreatedAt: now,
			})
		}
	}
	if len(digests) > 0 {
		if err := s.store.Enqueue(ctx, digests); err != nil {
			return restore(Internal(op, err))
		}
	}
	rep.Digests = len(digests)
	return rep, nil
}

// Beat records that the bridge is up.
func (s *Service) Beat(ctx context.Context) error {
	_, err := s.store.Beat(ctx, s.now())
	return Internal("heartbeat", err)
}

// Purge drops closed questions older than the retention period, with their
// events, and returns how many went.
func (s *Service) Purge(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.cfg.Retention)
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

// Loops are the intervals of the background work Run does.
type Loops struct {
	Tick      time.Duration // timeout ticker
	Heartbeat time.Duration
	Purge     time.Duration
}

// Run runs the ticker, the heartbeat and retention until ctx ends (call
// Boot first, once). Errors of one pass are reported to onErr and the loop goes on: a
// store that is briefly away must not stop the bridge.
func (s *Service) Run(ctx context.Context, l Loops, onErr func(error)) error {
	if l.Tick <= 0 {
		l.Tick = time.Second
	}
	if l.Heartbeat <= 0 {
		l.Heartbeat = 15 * time.Second
	}
	if l.Purge <= 0 {
		l.Purge = time.Hour
	}
	if onErr == nil {
		onErr = func(error) {}
	}
	tick, beat, purge := time.NewTicker(l.Tick), time.NewTicker(l.Heartbeat), time.NewTicker(l.Purge)
	defer tick.Stop()
	defer beat.Stop()
	defer purge.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
				onErr(err)
			}
		case <-beat.C:
			if err := s.Beat(ctx); err != nil && ctx.Err() == nil {
				onErr(err)
			}
		case <-purge.C:
			if _, err := s.Purge(ctx); err != nil && ctx.Err() == nil {
				onErr(err)
			}
		}
	}
}
