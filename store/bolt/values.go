package bolt

import (
	"context"
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
