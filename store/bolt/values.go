package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/askbridge/askbridge/core"
	"go.etcd.io/bbolt"
)

var _ core.Values = (*Store)(nil)

// leaseRecord is who holds a lease and until when (wall clock).
type leaseRecord struct {
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
}

// Value returns what key holds, or "" if nothing. A key set with an
// expiry reads "" once it has passed, before Purge gets to it.
func (s *Store) Value(_ context.Context, key string) (string, error) {
	var v string
	err := s.view("value", func(tx *bbolt.Tx) error {
		v = s.readValue(tx, key)
		return nil
	})
	return v, err
}

// readValue is what key holds in tx: "" if nothing, or if it expired.
func (s *Store) readValue(tx *bbolt.Tx, key string) string {
	if b := tx.Bucket(bucketValues); b != nil {
		if raw := b.Get([]byte(key)); raw != nil {
			return string(raw)
		}
	}
	if b := tx.Bucket(bucketValuesTTL); b != nil {
		if until, val, ok := splitExpiring(b.Get([]byte(key))); ok && s.now().Before(until) {
			return string(val)
		}
	}
	return ""
}

// SetValue stores val under key, dropping any expiry it had.
func (s *Store) SetValue(ctx context.Context, key, val string) error {
	return s.update(ctx, "set value", func(tx *bbolt.Tx) error { return putValue(tx, key, val) })
}

// putValue stores val under key in tx, dropping any expiry it had.
func putValue(tx *bbolt.Tx, key, val string) error {
	if err := deleteValue(tx, key); err != nil {
		return err
	}
	b, err := tx.CreateBucketIfNotExists(bucketValues)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), []byte(val))
}

// SetValueFor stores val under key until ttl passes.
func (s *Store) SetValueFor(ctx context.Context, key, val string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return core.Errorf(core.CodeInvalid, "set value", "a value lasts at least a millisecond")
	}
	return s.update(ctx, "set value", func(tx *bbolt.Tx) error {
		if err := deleteValue(tx, key); err != nil {
			return err
		}
		b, err := tx.CreateBucketIfNotExists(bucketValuesTTL)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), joinExpiring(s.now().Add(ttl), val))
	})
}

// SetValueIf stores val under key if key holds old, in one transaction:
// the comparison reads what Value would (an expired value as none), and
// the write is SetValue's. A key that holds neither writes nothing and
// commits nothing.
func (s *Store) SetValueIf(ctx context.Context, key, old, val string) (bool, error) {
	if val == "" {
		return false, core.Errorf(core.CodeInvalid, "set value if", "an empty value would read as none")
	}
	set := false
	err := s.update(ctx, "set value if", func(tx *bbolt.Tx) error {
		set = false // the closure may run again (commit.go)
		switch s.readValue(tx, key) {
		case val:
			set = true
			return errNoChange // holds it already
		case old:
		default:
			return errNoChange
		}
		set = true
		return putValue(tx, key, val)
	})
	return set && err == nil, err
}

// DeleteValue drops key from both value buckets.
func (s *Store) DeleteValue(ctx context.Context, key string) error {
	return s.update(ctx, "delete value", func(tx *bbolt.Tx) error { return deleteValue(tx, key) })
}

func deleteValue(tx *bbolt.Tx, key string) error {
	for _, name := range [][]byte{bucketValues, bucketValuesTTL} {
		if b := tx.Bucket(name); b != nil {
			if err := b.Delete([]byte(key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// joinExpiring and splitExpiring are an expiring value's record: its
// expiry in Unix milliseconds (8 bytes), then the value.
func joinExpiring(until time.Time, val string) []byte {
	return append(u64(uint64(until.UnixMilli())), val...)
}

func splitExpiring(raw []byte) (time.Time, []byte, bool) {
	if len(raw) < 8 {
		return time.Time{}, nil, false
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(raw[:8]))), raw[8:], true
}

// Lease takes or renews key for owner; one transaction makes it atomic.
// A lease refused writes nothing and commits nothing.
func (s *Store) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, core.Errorf(core.CodeInvalid, "lease", "a lease lasts at least a millisecond")
	}
	got := false
	err := s.update(ctx, "lease", func(tx *bbolt.Tx) error {
		got = false // the closure may run again (commit.go)
		b, err := tx.CreateBucketIfNotExists(bucketLeasesKV)
		if err != nil {
			return err
		}
		now := s.now()
		var cur leaseRecord
		if raw := b.Get([]byte(key)); raw != nil {
			if err := json.Unmarshal(raw, &cur); err != nil {
				return err
			}
			if cur.Owner != owner && now.Before(cur.Until) {
				// Held by another, not expired: nothing written, so no
				// commit (and no fsync) is paid for it. A restarted
				// bridge's first reminder pass asks again for every
				// reminder claimed before it stopped.
				return errNoChange
			}
		}
		raw, err := json.Marshal(leaseRecord{Owner: owner, Until: now.Add(ttl)})
		if err != nil {
			return err
		}
		got = true
		return b.Put([]byte(key), raw)
	})
	return got, err
}

// Release drops owner's lease on key.
func (s *Store) Release(ctx context.Context, key, owner string) error {
	return s.update(ctx, "release", func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLeasesKV)
		if b == nil {
			return errNoChange
		}
		var cur leaseRecord
		if raw := b.Get([]byte(key)); raw != nil && json.Unmarshal(raw, &cur) == nil && cur.Owner == owner {
			return b.Delete([]byte(key))
		}
		return errNoChange // not owner's: nothing to commit
	})
}

// Once records key with its expiry; a later call before the expiry is
// refused. Purge drops expired keys (purgeExpired).
func (s *Store) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, core.Errorf(core.CodeInvalid, "once", "a key lasts at least a millisecond")
	}
	first := false
	err := s.update(ctx, "once", func(tx *bbolt.Tx) error {
		first = false // the closure may run again (commit.go)
		b, err := tx.CreateBucketIfNotExists(bucketOnce)
		if err != nil {
			return err
		}
		now := s.now()
		if until, _, ok := readOnce(b.Get([]byte(key))); ok && now.Before(until) {
			return errNoChange // not the first (or claimed): nothing to commit, nor fsync
		}
		raw, err := now.Add(ttl).MarshalBinary()
		if err != nil {
			return err
		}
		first = true
		return b.Put([]byte(key), raw)
	})
	return first, err
}

// onceExpiry and valueExpiry read the expiry of a Once key's and of an
// expiring value's record.
func onceExpiry(v []byte) (time.Time, bool) {
	until, _, ok := readOnce(v)
	return until, ok
}

// claimMark begins the record of a once key claimed (ClaimOnce): '~',
// the claim's end in Unix milliseconds (8 bytes), then the holder's
// name. A key done (Once, ConfirmOnce) holds its expiry as
// time.MarshalBinary writes it, whose first byte, its version, is
// never '~'.
const claimMark = '~'

func claimRecord(until time.Time, holder string) []byte {
	return append(append([]byte{claimMark}, u64(uint64(until.UnixMilli()))...), holder...)
}

// readOnce reads a once key's record: until when it holds, and who
// claims it ("" for a key done). ok is false for no record, or one that
// cannot be read (which Purge drops).
func readOnce(raw []byte) (until time.Time, holder string, ok bool) {
	if len(raw) > 0 && raw[0] == claimMark {
		if len(raw) < 9 {
			return time.Time{}, "", false
		}
		return time.UnixMilli(int64(binary.BigEndian.Uint64(raw[1:9]))), string(raw[9:]), true
	}
	if raw == nil || until.UnmarshalBinary(raw) != nil {
		return time.Time{}, "", false
	}
	return until, "", true
}

// ClaimOnce claims key for holder until hold passes, in one transaction,
// unless another holder's live claim or a live mark of a key done is on
// it; a refusal writes nothing and commits nothing.
func (s *Store) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	if hold < time.Millisecond {
		return 0, core.Errorf(core.CodeInvalid, "claim once", "a claim lasts at least a millisecond")
	}
	if holder == "" {
		return 0, core.Errorf(core.CodeInvalid, "claim once", "a claim needs its holder")
	}
	var st core.OnceState
	err := s.update(ctx, "claim once", func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketOnce)
		if err != nil {
			return err
		}
		now := s.now()
		if until, by, ok := readOnce(b.Get([]byte(key))); ok && now.Before(until) && by != holder {
			st = core.OnceHeld
			if by == "" {
				st = core.OnceDone
			}
			return errNoChange
		}
		st = core.OnceClaimed
		return b.Put([]byte(key), claimRecord(now.Add(hold), holder))
	})
	if err != nil {
		return 0, err
	}
	return st, nil
}

// ConfirmOnce marks key done until ttl passes, unless another holder's
// live claim or a live mark of a key done is on it.
func (s *Store) ConfirmOnce(ctx context.Context, key, holder string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return core.Errorf(core.CodeInvalid, "confirm once", "a key lasts at least a millisecond")
	}
	if holder == "" {
		return core.Errorf(core.CodeInvalid, "confirm once", "a confirmation needs its holder")
	}
	return s.update(ctx, "confirm once", func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketOnce)
		if err != nil {
			return err
		}
		now := s.now()
		if until, by, ok := readOnce(b.Get([]byte(key))); ok && now.Before(until) && by != holder {
			return errNoChange // another's claim, or done already
		}
		raw, err := now.Add(ttl).MarshalBinary()
		if err != nil {
			return err
		}
		return b.Put([]byte(key), raw)
	})
}

// ReleaseOnce drops holder's claim on key; anything else stays.
func (s *Store) ReleaseOnce(ctx context.Context, key, holder string) error {
	return s.update(ctx, "release once", func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketOnce)
		if b == nil {
			return errNoChange
		}
		if _, by, ok := readOnce(b.Get([]byte(key))); !ok || by == "" || by != holder {
			return errNoChange
		}
		return b.Delete([]byte(key))
	})
}

func leaseExpiry(v []byte) (time.Time, bool) {
	var r leaseRecord
	return r.Until, json.Unmarshal(v, &r) == nil
}

func valueExpiry(v []byte) (time.Time, bool) {
	until, _, ok := splitExpiring(v)
	return until, ok
}

// purgeExpired drops the keys of bucket whose expiry (read by expiry) has
// passed on the store's clock or cannot be read, all of them, a batch at
// a time: a read transaction looks at up to purgeBatch keys, from where
// the last batch stopped, and a write transaction drops those of them
// that are still expired (a key may have been set again between the
// two). The single writer is held only for the deletes, and every key is
// looked at once per purge however many live keys lie between the
// expired ones.
func (s *Store) purgeExpired(ctx context.Context, bucket []byte, expiry func([]byte) (time.Time, bool)) error {
	return s.purgeWhere(ctx, bucket, func(v []byte, now time.Time) bool {
		until, ok := expiry(v)
		return !ok || !now.Before(until)
	})
}

// purgeWhere drops the keys of bucket whose value expired says are to go
// at now, the store's clock, batch by batch as purgeExpired says.
func (s *Store) purgeWhere(ctx context.Context, bucket []byte, expired func(v []byte, now time.Time) bool) error {
	const op = "purge"
	var from []byte // the first key of the next batch; nil: the first
	for {
		var (
			old  [][]byte
			next []byte
		)
		err := s.view(op, func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucket)
			if b == nil {
				return nil
			}
			now := s.now()
			c := b.Cursor()
			k, v := c.First()
			if from != nil {
				k, v = c.Seek(from)
			}
			for n := 0; k != nil; k, v = c.Next() {
				if n == purgeBatch {
					next = bytes.Clone(k)
					break
				}
				n++
				if expired(v, now) {
					old = append(old, bytes.Clone(k))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(old) > 0 {
			err = s.update(ctx, op, func(tx *bbolt.Tx) error {
				b := tx.Bucket(bucket)
				if b == nil {
					return errNoChange
				}
				now, dropped := s.now(), 0
				for _, k := range old {
					if v := b.Get(k); v == nil || !expired(v, now) {
						continue
					}
					if err := b.Delete(k); err != nil {
						return err
					}
					dropped++
				}
				if dropped == 0 {
					return errNoChange
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		from = next
	}
}
