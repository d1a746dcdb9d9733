package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// Enqueue stores deliveries that belong to no question transition.
func (s *Store) Enqueue(ctx context.Context, out []core.Delivery) error {
	const op = "enqueue"
	if err := checkDeliveries(op, out); err != nil {
		return err
	}
	if len(out) == 0 {
		return nil
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var eff effects
	err := s.update(ctx, op, func(tx *bbolt.Tx) error {
		eff = effects{}
		for _, d := range out {
			if d.CreatedAt.IsZero() {
				d.CreatedAt = now
			}
			if err := enqueue(tx, d, &eff); err != nil {
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
// claim first, then never-claimed ones in enqueue order. With none
// available it waits up to block for an enqueue to the surface, without
// polling; ctx and Close end the wait early.
func (s *Store) Claim(ctx context.Context, surface core.Surface, consumer string, max int, minIdle, block time.Duration) ([]core.Delivery, error) {
	const op = "claim"
	if max <= 0 {
		return nil, core.Errorf(core.CodeInvalid, op, "max must be positive, not %d", max)
	}
	if !surface.IsChat() {
		return nil, core.Errorf(core.CodeInvalid, op, "only chat surfaces have outboxes, not %q", surface)
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
		got, err := s.claimOnce(ctx, surface, consumer, max, minIdle)
		if err != nil || len(got) > 0 || block <= 0 {
			return got, err
		}
		if s.waiting != nil {
			s.waiting()
		}
		select {
		case <-ready:
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
	oldLease []byte
}

// claimOnce leases what is available now, in one transaction.
func (s *Store) claimOnce(ctx context.Context, surface core.Surface, consumer string, max int, minIdle time.Duration) ([]core.Delivery, error) {
	var out []core.Delivery
	err := s.update(ctx, "claim", func(tx *bbolt.Tx) error {
		out = nil
		ob := tx.Bucket(outboxBucket(surface))
		if ob == nil {
			return errNoChange
		}
		lb, err := tx.CreateBucketIfNotExists(leaseBucket(surface))
		if err != nil {
			return err
		}
		now := s.now()
		var take []claimed
		var stale [][]byte

		// Leases are ordered by claim time, so the first one that is not
		// idle long enough ends the reclaim pass.
		c := lb.Cursor()
		for k, _ := c.First(); k != nil && len(take) < max; k, _ = c.Next() {
			seq := seqOfSuffix(k)
			v := ob.Get(u64(seq))
			if v == nil {
				stale = append(stale, bytes.Clone(k))
				continue
			}
			rec, err := decodeOutbox(v)
			if err != nil {
				return err
			}
			if rec.Lease == nil || !bytes.Equal(leaseKey(rec.Lease.At, seq), k) {
				stale = append(stale, bytes.Clone(k)) // the entry has no such lease
				continue
			}
			if now.Sub(rec.Lease.At) < minIdle {
				break
			}
			take = append(take, claimed{seq: seq, rec: rec, oldLease: bytes.Clone(k)})
		}

		// Never-claimed entries; the leased ones skipped here are the
		// deliveries in flight, a handful.
		c = ob.Cursor()
		for k, v := c.First(); k != nil && len(take) < max; k, v = c.Next() {
			rec, err := decodeOutbox(v)
			if err != nil {
				return err
			}
			if rec.Lease != nil {
				continue
			}
			take = append(take, claimed{seq: seqOfSuffix(k), rec: rec})
		}
		if len(take) == 0 && len(stale) == 0 {
			return errNoChange
		}

		for _, k := range stale {
			if err := lb.Delete(k); err != nil {
				return err
			}
		}
		for _, t := range take {
			attempts := 1
			if t.oldLease != nil {
				if err := lb.Delete(t.oldLease); err != nil {
					return err
				}
				attempts = t.rec.Lease.Attempts + 1
			}
			t.rec.Lease = &lease{Consumer: consumer, At: now, Attempts: attempts}
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
			d.ID = deliveryID(t.seq)
			d.Attempts = attempts
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// Ack deletes a delivery; acking an unknown or already acked one is a
// no-op, so a retried Ack is harmless.
func (s *Store) Ack(ctx context.Context, surface core.Surface, id string) error {
	const op = "ack"
	seq, err := parseDeliveryID(id)
	if err != nil {
		return err
	}
	return s.update(ctx, op, func(tx *bbolt.Tx) error {
		ob := tx.Bucket(outboxBucket(surface))
		if ob == nil {
			return errNoChange
		}
		v := ob.Get(u64(seq))
		if v == nil {
			return errNoChange
		}
		rec, err := decodeOutbox(v)
		if err != nil {
			return err
		}
		if rec.Lease != nil {
			if lb := tx.Bucket(leaseBucket(surface)); lb != nil {
				if err := lb.Delete(leaseKey(rec.Lease.At, seq)); err != nil {
					return err
				}
			}
		}
		return ob.Delete(u64(seq))
	})
}
