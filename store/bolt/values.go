package bolt

import (
	"context"
	"encoding/json"
	"errors"
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

// Value returns what key holds, or "" if nothing.
func (s *Store) Value(_ context.Context, key string) (string, error) {
	var v string
	err := s.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketValues); b != nil {
			v = string(b.Get([]byte(key)))
		}
		return nil
	})
	return v, err
}

// SetValue stores val under key.
func (s *Store) SetValue(ctx context.Context, key, val string) error {
	return s.update(ctx, "set value", func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketValues)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), []byte(val))
	})
}

// Lease takes or renews key for owner; one transaction makes it atomic.
func (s *Store) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	got := false
	err := s.update(ctx, "lease", func(tx *bbolt.Tx) error {
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
				return nil // held by another, not expired
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
			return nil
		}
		var cur leaseRecord
		if raw := b.Get([]byte(key)); raw != nil && json.Unmarshal(raw, &cur) == nil && cur.Owner == owner {
			return b.Delete([]byte(key))
		}
		return nil
	})
}

// Once records key with its expiry; a later call before the expiry is
// refused. Purge drops expired keys (purgeOnce).
func (s *Store) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	first := false
	err := s.update(ctx, "once", func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketOnce)
		if err != nil {
			return err
		}
		now := s.now()
		if raw := b.Get([]byte(key)); raw != nil {
			var until time.Time
			if until.UnmarshalBinary(raw) == nil && now.Before(until) {
				return nil
			}
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

// purgeOnce drops expired Once keys, at most limit (<= 0: all), and says
// how many.
func purgeOnce(tx *bbolt.Tx, now time.Time, limit int) (int, error) {
	b := tx.Bucket(bucketOnce)
	if b == nil {
		return 0, nil
	}
	var expired [][]byte
	err := b.ForEach(func(k, v []byte) error {
		var until time.Time
		if until.UnmarshalBinary(v) != nil || !now.Before(until) {
			expired = append(expired, append([]byte(nil), k...))
		}
		if limit > 0 && len(expired) >= limit {
			return errStopScan
		}
		return nil
	})
	if err != nil && err != errStopScan {
		return 0, err
	}
	for _, k := range expired {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}

var errStopScan = errors.New("stop scan")
