package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Enqueue stores deliveries that belong to no question transition, in
// one transaction; a delayed one is due only after its delay (pending.go).
func (s *Store) Enqueue(ctx context.Context, out []core.Delivery) error {
	const op = "enqueue"
	if err := checkDeliveries(op, out); err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	dues := s.dues(out)
	var eff effects
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		for i, d := range out {
			if d.CreatedAt.IsZero() {
				d.CreatedAt = now
			}
			if err := enqueueDue(tx, d, dues, i, &eff); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.announce(&eff)
	return nil
}

// Claim hands out up to max deliveries for surface: first those whose
// lease is at least minIdle old (their consumer is presumed dead), oldest
// claim first, then those no consumer leases that are due (never
// claimed, or retried or delayed and fallen due), in enqueue order. With
// none available it waits up to block for an enqueue to the surface, or
// for the earliest waiting one to fall due, without polling; ctx and
// Close end the wait early.
func (s *Store) Claim(ctx context.Context, surface core.Surface, consumer string, max int, minIdle, block time.Duration) ([]core.Delivery, error) {
	const op = "claim"
	if max <= 0 {
		return nil, core.Errorf(core.CodeInvalid, op, "max must be positive, not %d", max)
	}
	if !surface.HasOutbox() {
		return nil, core.Errorf(core.CodeInvalid, op, "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	if consumer == "" {
		// Retries, extends and take-overs are of a named consumer's claims.
		return nil, core.Errorf(core.CodeInvalid, op, "a consumer name is required")
	}
	var timeout <-chan time.Time
	if block > 0 {
		t := time.NewTimer(block)
		defer t.Stop()
		timeout = t.C
	}
	for {
		// Take the signal before looking, so an enqueue that commits
		// after the look still wakes us.
		ready := s.ready.wait(surface)
		got, next, err := s.claimOnce(ctx, surface, consumer, max, minIdle)
		if err != nil || len(got) > 0 || block <= 0 {
			return got, err
		}
		if s.waiting != nil {
			s.waiting()
		}
		// A retried (or delayed) delivery falling due wakes the claim too,
		// measured on the store's clock, which the due times are on.
		var due <-chan time.Time
		if !next.IsZero() {
			due = time.After(next.Sub(s.now())) // collected once it fires or is dropped
		}
		select {
		case <-ready:
		case <-due:
		case <-timeout:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.done:
			return nil, core.Internal("bolt "+op, ErrStoreClosed)
		}
	}
}

type claimed struct {
	seq      uint64
	rec      *outboxRecord
	oldLease []byte // its idle lease's entry; nil: it is taken from ready
}

// claimOnce leases what is available now, in one transaction, and says
// when the earliest delivery not yet due falls due (zero: none). It
// looks first in a read transaction, at the first entries of the claim
// index alone (claimindex.go): a claim that finds nothing to take, the
// usual case while deliveries wait on their budgets, neither joins the
// commit queue, where it held up the writes committed with it (issue
// 31), nor reads the deliveries that wait.
func (s *Store) claimOnce(ctx context.Context, surface core.Surface, consumer string, max int, minIdle time.Duration) ([]core.Delivery, time.Time, error) {
	var next time.Time
	some := false
	err := s.view("claim", func(tx *bbolt.Tx) error {
		some, next = claimWork(tx, surface, s.now(), minIdle)
		return nil
	})
	if err != nil || !some {
		return nil, next, err
	}
	var out []core.Delivery
	err = s.update(ctx, "claim", func(tx *bbolt.Tx) error {
		out, next = nil, time.Time{}
		ob := tx.Bucket(outboxBucket(surface))
		if ob == nil {
			return errNoChange
		}
		now := s.now()
		// Nothing is written before errNoChange unless deliveries fell
		// due: moving them to ready is a change to commit.
		moved, n, err := promoteDue(tx, surface, now)
		if err != nil {
			return err
		}
		next = n
		lb, rb := tx.Bucket(leaseBucket(surface)), tx.Bucket(readyBucket(surface))
		take, stale, err := claimable(ob, lb, rb, now, max, minIdle)
		if err != nil {
			return err
		}
		if len(take) == 0 && len(stale) == 0 && !moved {
			return errNoChange
		}
		for _, k := range stale {
			if err := k.b.Delete(k.k); err != nil {
				return err
			}
		}
		if len(take) == 0 {
			return nil
		}
		if lb == nil {
			if lb, err = tx.CreateBucket(leaseBucket(surface)); err != nil {
				return err
			}
		}
		for _, t := range take {
			attempts := t.rec.Prior + 1
			if t.oldLease != nil {
				if err := lb.Delete(t.oldLease); err != nil {
					return err
				}
				attempts = t.rec.Lease.Attempts + 1
			} else if err := rb.Delete(u64(t.seq)); err != nil {
				return err
			}
			t.rec.Lease = &lease{Consumer: consumer, At: now, Attempts: attempts}
			t.rec.Due = time.Time{}
			if err := unpend(tx, surface, t.rec); err != nil {
				return err
			}
			b, err := json.Marshal(t.rec)
			if err != nil {
				return err
			}
			if err := ob.Put(u64(t.seq), b); err != nil {
				return err
			}
			if err := lb.Put(leaseKey(now, t.seq), nil); err != nil {
				return err
			}
			d := t.rec.Delivery
			d.ID = deliveryID(t.seq, consumer)
			d.Attempts = attempts
			out = append(out, d)
		}
		return nil
	})
	return out, next, err
}

// staleEntry is an index entry that names no record it may: bucket b's
// key k.
type staleEntry struct {
	b *bbolt.Bucket
	k []byte
}

// claimable finds, in outbox ob, its lease bucket lb and its ready
// bucket rb (either nil if none yet), up to max deliveries to lease at
// now: those whose lease has been idle minIdle, oldest claim first, then
// the ready ones in enqueue order; and the entries of lb and rb that
// point at nothing (stale). It reads only the records it returns.
func claimable(ob, lb, rb *bbolt.Bucket, now time.Time, max int, minIdle time.Duration) (take []claimed, stale []staleEntry, err error) {
	// Leases are ordered by claim time, so the first one that is not
	// idle long enough ends the reclaim pass.
	var c *bbolt.Cursor
	if lb != nil {
		c = lb.Cursor()
	}
	for k, _ := first(c); k != nil && len(take) < max; k, _ = c.Next() {
		seq := seqOfSuffix(k)
		rec, err := record(ob, seq)
		if err != nil {
			return nil, nil, err
		}
		if rec == nil || rec.Lease == nil || !bytes.Equal(leaseKey(rec.Lease.At, seq), k) {
			stale = append(stale, staleEntry{lb, bytes.Clone(k)}) // the entry has no such lease
			continue
		}
		if now.Sub(rec.Lease.At) < minIdle {
			break
		}
		take = append(take, claimed{seq: seq, rec: rec, oldLease: bytes.Clone(k)})
	}

	c = nil
	if rb != nil {
		c = rb.Cursor()
	}
	for k, _ := first(c); k != nil && len(take) < max; k, _ = c.Next() {
		seq := seqOfSuffix(k)
		rec, err := record(ob, seq)
		if err != nil {
			return nil, nil, err
		}
		if rec == nil || rec.Lease != nil {
			stale = append(stale, staleEntry{rb, bytes.Clone(k)})
			continue
		}
		take = append(take, claimed{seq: seq, rec: rec})
	}
	return take, stale, nil
}

// record is delivery seq of outbox ob, or nil if there is none.
func record(ob *bbolt.Bucket, seq uint64) (*outboxRecord, error) {
	v := ob.Get(u64(seq))
	if v == nil {
		return nil, nil
	}
	return decodeOutbox(v)
}

// first is c's first entry, or none when there is no bucket to scan.
func first(c *bbolt.Cursor) ([]byte, []byte) {
	if c == nil {
		return nil, nil
	}
	return c.First()
}

// Ack deletes a delivery while it is still leased to the consumer its id
// names; acking an unknown or already acked one is a no-op, so a retried
// Ack is harmless. So is a late ack by a consumer whose lease another
// took over (it was frozen past the idle limit): the other consumer's
// send may yet fail and hand the delivery back, which must then find it.
func (s *Store) Ack(ctx context.Context, surface core.Surface, id string) error {
	const op = "ack"
	seq, consumer, err := parseDeliveryID(id)
	if err != nil {
		return err
	}
	return s.update(ctx, op, func(tx *bbolt.Tx) error {
		ob, rec, err := takeLease(tx, surface, seq, consumer)
		if rec == nil || err != nil {
			return err
		}
		return ob.Delete(u64(seq))
	})
}

// takeLease reads delivery seq and ends its lease, if it is still leased
// to consumer; a nil record (and errNoChange) means it is not (acked,
// handed back, or taken over by another consumer after it idled), and
// nothing changed.
func takeLease(tx *bbolt.Tx, surface core.Surface, seq uint64, consumer string) (*bbolt.Bucket, *outboxRecord, error) {
	ob, rec, err := readOutbox(tx, surface, seq)
	if rec == nil || err != nil {
		return nil, nil, err
	}
	if !rec.leasedTo(consumer) {
		return nil, nil, errNoChange
	}
	if err := dropLease(tx, surface, rec, seq); err != nil {
		return nil, nil, err
	}
	return ob, rec, nil
}

// leasedTo reports whether rec is leased to consumer.
func (rec *outboxRecord) leasedTo(consumer string) bool {
	return rec.Lease != nil && rec.Lease.Consumer == consumer
}

// readOutbox reads delivery seq of surface's outbox; a nil record (and
// errNoChange) means there is none.
func readOutbox(tx *bbolt.Tx, surface core.Surface, seq uint64) (*bbolt.Bucket, *outboxRecord, error) {
	ob := tx.Bucket(outboxBucket(surface))
	if ob == nil {
		return nil, nil, errNoChange
	}
	v := ob.Get(u64(seq))
	if v == nil {
		return ob, nil, errNoChange
	}
	rec, err := decodeOutbox(v)
	if err != nil {
		return ob, nil, err
	}
	return ob, rec, nil
}

// dropLease removes rec's lease from the index of leases, if it has one.
func dropLease(tx *bbolt.Tx, surface core.Surface, rec *outboxRecord, seq uint64) error {
	if rec.Lease == nil {
		return nil
	}
	if lb := tx.Bucket(leaseBucket(surface)); lb != nil {
		return lb.Delete(leaseKey(rec.Lease.At, seq))
	}
	return nil
}

// Retry takes the delivery back from consumer's lease and makes it due
// after the wait. A delivery no longer leased to consumer (acked, or taken
// over after consumer looked dead) is left alone.
func (s *Store) Retry(ctx context.Context, d core.Delivery, consumer string, after time.Duration) error {
	const op = "retry"
	seq, _, err := parseDeliveryID(d.ID)
	if err != nil {
		return err
	}
	if after < 0 {
		after = 0
	}
	var eff effects
	err = s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		ob, rec, err := takeLease(tx, d.Surface, seq, consumer)
		if rec == nil || err != nil {
			return err
		}
		rec.Lease, rec.Prior, rec.Due = nil, max(d.Attempts, 0), s.now().Add(after)
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := ob.Put(u64(seq), b); err != nil {
			return err
		}
		if err := indexUnleased(tx, d.Surface, rec, seq); err != nil {
			return err
		}
		eff.enqueued(d.Surface)
		return nil
	})
	if err != nil {
		return err
	}
	s.announce(&eff)
	return nil
}

// Extend renews consumer's leases on ids, so they do not look idle, and
// reports those that are not consumer's any more (acked, handed back, or
// claimed by another consumer after they idled), which it leaves alone.
func (s *Store) Extend(ctx context.Context, surface core.Surface, consumer string, ids []string) ([]string, error) {
	const op = "extend"
	seqs := make([]uint64, 0, len(ids))
	for _, id := range ids {
		seq, _, err := parseDeliveryID(id)
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	var lost []string
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		lost = lost[:0] // the committer may run this again
		ob, lb := tx.Bucket(outboxBucket(surface)), tx.Bucket(leaseBucket(surface))
		if ob == nil || lb == nil {
			lost = append(lost, ids...)
			return errNoChange
		}
		now := s.now()
		changed := false
		for i, seq := range seqs {
			_, rec, err := readOutbox(tx, surface, seq)
			if rec == nil && err != errNoChange {
				return err
			}
			if rec == nil || !rec.leasedTo(consumer) {
				lost = append(lost, ids[i])
				continue
			}
			if err := dropLease(tx, surface, rec, seq); err != nil {
				return err
			}
			rec.Lease.At = now
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := ob.Put(u64(seq), b); err != nil {
				return err
			}
			if err := lb.Put(leaseKey(now, seq), nil); err != nil {
				return err
			}
			changed = true
		}
		if !changed {
			return errNoChange
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return lost, nil
}

// Leave has nothing to forget: the embedded store keeps no list of
// consumers, only leases on deliveries, which Ack and Retry end.
func (s *Store) Leave(ctx context.Context, surface core.Surface, consumer string, idle time.Duration) error {
	if !surface.HasOutbox() {
		return core.Errorf(core.CodeInvalid, "leave", "only %s have outboxes, not %q", core.SurfaceNames(core.OutboxSurfaces), surface)
	}
	return nil
}
