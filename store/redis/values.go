package redis

import (
	"context"
	"errors"

	goredis "github.com/redis/go-redis/v9"

	"time"

	"github.com/askbridge/askbridge/core"
)

var _ core.Values = (*Store)(nil)

// Value returns what key holds, or "" if nothing.
func (s *Store) Value(ctx context.Context, key string) (string, error) {
	v, err := s.client.Get(ctx, s.k.value(key)).Result()
	if errors.Is(err, goredis.Nil) {
		return "", nil
	}
	return v, err
}

// SetValue stores val under key, without expiry.
func (s *Store) SetValue(ctx context.Context, key, val string) error {
	return s.client.Set(ctx, s.k.value(key), val, 0).Err()
}

// SetValueFor stores val under key with an expiry; Redis drops it when it
// passes, on the server's clock. A plain SetValue later drops the expiry.
func (s *Store) SetValueFor(ctx context.Context, key, val string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return core.Errorf(core.CodeInvalid, "set value", "a value lasts at least a millisecond")
	}
	return s.client.Set(ctx, s.k.value(key), val, ttl).Err()
}

// SetValueIf stores val under key if key holds old (set_value_if.lua):
// one key, so one slot on a cluster. Redis's own expiry means an expired
// value reads as none there too.
func (s *Store) SetValueIf(ctx context.Context, key, old, val string) (bool, error) {
	if val == "" {
		return false, core.Errorf(core.CodeInvalid, "set value if", "an empty value would read as none")
	}
	r, err := s.run(ctx, setValueIfScript, []string{s.k.value(key)}, 0, "", "", old, val)
	if err != nil {
		return false, core.Internal("set value if", err)
	}
	return r.n == 1, nil
}

// DeleteValue drops key.
func (s *Store) DeleteValue(ctx context.Context, key string) error {
	return s.client.Del(ctx, s.k.value(key)).Err()
}

// Lease takes or renews key for owner; lease.lua makes it atomic. Expiry
// runs on the Redis server's clock, so replicas' clocks need not agree.
func (s *Store) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, core.Errorf(core.CodeInvalid, "lease", "a lease lasts at least a millisecond")
	}
	r, err := s.run(ctx, leaseScript, []string{s.k.lease(key)}, 0, "", "", owner, ttl.Milliseconds())
	if err != nil {
		return false, core.Internal("lease", err)
	}
	return r.n == 1, nil
}

// Release drops owner's lease on key.
func (s *Store) Release(ctx context.Context, key, owner string) error {
	_, err := s.run(ctx, releaseScript, []string{s.k.lease(key)}, 0, "", "", owner)
	return core.Internal("release", err)
}

// Once takes key for ttl as a lease no one else holds (lease.lua), under
// an owner new to this call: a call go-redis sends again after losing its
// reply finds its own first run's mark and is still first, where a plain
// SET NX would tell it the key was taken and a click would be dropped.
// Redis drops the key when it expires.
func (s *Store) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, core.Errorf(core.CodeInvalid, "once", "a key lasts at least a millisecond")
	}
	r, err := s.run(ctx, leaseScript, []string{s.k.once(key)}, 0, "", "", s.attempt(), ttl.Milliseconds())
	if err != nil {
		return false, core.Internal("once", err)
	}
	return r.n == 1, nil
}

// onceClaim is how a claim on a once key is written (once_claim.lua): a
// mark no confirmed key (once_confirm.lua's "=") and no key Once took
// (an attempt's name, base64url) begins with, and the holder's name.
func onceClaim(holder string) string { return "~" + holder }

// ClaimOnce claims key for holder until hold passes (once_claim.lua).
// A call go-redis sends again after losing its reply finds its own claim
// and is still the holder's.
func (s *Store) ClaimOnce(ctx context.Context, key, holder string, hold time.Duration) (core.OnceState, error) {
	if hold < time.Millisecond {
		return 0, core.Errorf(core.CodeInvalid, "claim once", "a claim lasts at least a millisecond")
	}
	if holder == "" {
		return 0, core.Errorf(core.CodeInvalid, "claim once", "a claim needs its holder")
	}
	r, err := s.run(ctx, onceClaimScript, []string{s.k.once(key)}, 0, "", "", onceClaim(holder), hold.Milliseconds())
	if err != nil {
		return 0, core.Internal("claim once", err)
	}
	switch r.n {
	case 1:
		return core.OnceClaimed, nil
	case 2:
		return core.OnceHeld, nil
	}
	return core.OnceDone, nil
}

// ConfirmOnce marks key done until ttl passes, unless another holder's
// claim is on it or it is done already (once_confirm.lua).
func (s *Store) ConfirmOnce(ctx context.Context, key, holder string, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return core.Errorf(core.CodeInvalid, "confirm once", "a key lasts at least a millisecond")
	}
	if holder == "" {
		return core.Errorf(core.CodeInvalid, "confirm once", "a confirmation needs its holder")
	}
	_, err := s.run(ctx, onceConfirmScript, []string{s.k.once(key)}, 0, "", "", onceClaim(holder), ttl.Milliseconds())
	return core.Internal("confirm once", err)
}

// ReleaseOnce drops holder's claim on key: release.lua, which drops a
// key that holds exactly the claim, leaves a done key alone.
func (s *Store) ReleaseOnce(ctx context.Context, key, holder string) error {
	_, err := s.run(ctx, releaseScript, []string{s.k.once(key)}, 0, "", "", onceClaim(holder))
	return core.Internal("release once", err)
}
