package bolt

import (
	"bytes"
	"strconv"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// The claim index spares a claim the deliveries it will not take. Each
// outbox record that no consumer leases has exactly one entry: under its
// due time in waiting/<surface> while that lies ahead, or under its seq in
// ready/<surface> once it is due (it never waited, or a claim moved it
// there when its time came); a leased one has its entry in
// leases/<surface> instead. A claim reads the first entry of each, the
// ready records it takes and the idle leases it takes over. It used to
// decode every record of the outbox, those parked on a platform's rate
// limit too: with a burst waiting on its budget, each enqueue woke a
// claim that decoded the whole burst again (BENCHMARKS.md).
//
// Every write of an outbox record keeps its entry in the same
// transaction: enqueueRecord, Claim, Retry, Ack and Extend (through the
// lease entry), Cancel and the replacement of a delayed delivery. A file
// of schema version 1 has none; Open builds them once (upgrade).

// indexUnleased gives rec, which no consumer leases, its entry: waiting
// under its due time, or ready if it has none.
func indexUnleased(tx *bbolt.Tx, surface core.Surface, rec *outboxRecord, seq uint64) error {
	if rec.Due.IsZero() {
		rb, err := tx.CreateBucketIfNotExists(readyBucket(surface))
		if err != nil {
			return err
		}
		return rb.Put(u64(seq), nil)
	}
	wb, err := tx.CreateBucketIfNotExists(waitingBucket(surface))
	if err != nil {
		return err
	}
	return wb.Put(dueKey(rec.Due, seq), nil)
}

// unindexUnleased drops the entry of rec, which no consumer leases,
// wherever it is.
func unindexUnleased(tx *bbolt.Tx, surface core.Surface, rec *outboxRecord, seq uint64) error {
	if rb := tx.Bucket(readyBucket(surface)); rb != nil {
		if err := rb.Delete(u64(seq)); err != nil {
			return err
		}
	}
	if wb := tx.Bucket(waitingBucket(surface)); wb != nil && !rec.Due.IsZero() {
		return wb.Delete(dueKey(rec.Due, seq))
	}
	return nil
}

// claimWork reports, reading no record, whether a claim at now has
// anything to do (a lease idle for minIdle, a ready delivery, a waiting
// one fallen due), and when the earliest waiting delivery falls due
// (zero: none).
func claimWork(tx *bbolt.Tx, surface core.Surface, now time.Time, minIdle time.Duration) (some bool, next time.Time) {
	if k := firstKey(tx, leaseBucket(surface)); k != nil && now.Sub(timeOfLeaseKey(k)) >= minIdle {
		some = true
	}
	if k := firstKey(tx, readyBucket(surface)); k != nil {
		some = true
	}
	if k := firstKey(tx, waitingBucket(surface)); k != nil {
		if due := dueOfKey(k); due.After(now) {
			next = due
		} else {
			some = true
		}
	}
	return some, next
}

// firstKey is the first key of bucket name, or nil.
func firstKey(tx *bbolt.Tx, name []byte) []byte {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	k, _ := b.Cursor().First()
	return k
}

// promoteDue moves the waiting entries due by now to ready, and says
// whether it moved any (if not, it wrote nothing) and when the first one
// left falls due (zero: none). An entry moves once, so a burst falling
// due together costs its claims one move per delivery, and the ready
// entries keep enqueue order, the order claims hand deliveries out in.
func promoteDue(tx *bbolt.Tx, surface core.Surface, now time.Time) (moved bool, next time.Time, err error) {
	wb := tx.Bucket(waitingBucket(surface))
	if wb == nil {
		return false, next, nil
	}
	var due [][]byte
	c := wb.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if t := dueOfKey(k); t.After(now) {
			next = t
			break
		}
		due = append(due, bytes.Clone(k))
	}
	if len(due) == 0 {
		return false, next, nil
	}
	rb, err := tx.CreateBucketIfNotExists(readyBucket(surface))
	if err != nil {
		return false, next, err
	}
	for _, k := range due {
		if err := wb.Delete(k); err != nil {
			return false, next, err
		}
		if err := rb.Put(k[len(k)-8:], nil); err != nil {
			return false, next, err
		}
	}
	return true, next, nil
}

// upgrade brings a file of schema version from (this version's, for a
// new file) up to this version's, in Open's transaction, and marks it so,
// so each step runs once.
func upgrade(tx *bbolt.Tx, from int) error {
	if from < 2 {
		if err := buildClaimIndex(tx); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(metaSchema, []byte(strconv.Itoa(schemaVersion)))
}

// buildClaimIndex gives every outbox record that no consumer leases its
// entry in the claim index, replacing any index there is: a file of
// version 1 has outboxes without one. Leases were indexed already.
func buildClaimIndex(tx *bbolt.Tx) error {
	var surfaces []core.Surface
	err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		if s, ok := bytes.CutPrefix(name, []byte(outboxPrefix)); ok {
			surfaces = append(surfaces, core.Surface(s))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, surface := range surfaces {
		for _, name := range [][]byte{readyBucket(surface), waitingBucket(surface)} {
			if tx.Bucket(name) == nil {
				continue
			}
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		err := tx.Bucket(outboxBucket(surface)).ForEach(func(k, v []byte) error {
			rec, err := decodeOutbox(v)
			if err != nil {
				return err
			}
			if rec.Lease != nil {
				return nil
			}
			return indexUnleased(tx, surface, rec, seqOfSuffix(k))
		})
		if err != nil {
			return err
		}
	}
	return nil
}
