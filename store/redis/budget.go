package redis

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"

	"github.com/askbridge/askbridge/core"
)

var (
	_ core.Budget   = (*Store)(nil)
	_ core.Refunder = (*Store)(nil)
)

// Spend takes one send from key's budget, kept in Redis as a GCRA bucket
// so every replica spends from the same one: with N replicas the rate into
// one room is still the platform's. If the bucket is empty nothing is
// taken and the wait until it has a send is returned.
func (s *Store) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	const op = "redis spend"
	if err := l.Check(op, key); err != nil {
		return 0, err
	}
	res, err := s.rate.Allow(ctx, s.k.budget(key), redis_rate.Limit{Rate: l.Rate, Burst: max(l.Burst, 1), Period: l.Per})
	if err != nil {
		return 0, core.Internal(op, err)
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	return max(res.RetryAfter, time.Millisecond), nil
}

// Until reports how long until key's budget has a send, taking nothing:
// redis_rate's script asked for no sends reads the bucket's theoretical
// arrival time (ResetAfter, from now), and a send is granted once that
// is within the burst less one send of now.
func (s *Store) Until(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	const op = "redis until"
	if err := l.Check(op, key); err != nil {
		return 0, err
	}
	burst := max(l.Burst, 1)
	res, err := s.rate.AllowN(ctx, s.k.budget(key), redis_rate.Limit{Rate: l.Rate, Burst: burst, Period: l.Per}, 0)
	if err != nil {
		return 0, core.Internal(op, err)
	}
	slack := time.Duration(burst-1) * l.Per / time.Duration(l.Rate)
	return max(res.ResetAfter-slack, 0), nil
}

// Refund gives one send back to key's budget (refund.lua), up to its
// burst: read and written in one script, so a spend on another replica
// meanwhile is never overwritten.
func (s *Store) Refund(ctx context.Context, key string, l core.Limit) error {
	const op = "redis refund"
	if err := l.Check(op, key); err != nil {
		return err
	}
	if _, err := s.run(ctx, refundScript, []string{rateKey(s.k.budget(key))}, 0, "", "", l.Rate, l.Per.Seconds()); err != nil {
		return core.Internal(op, err)
	}
	return nil
}

// rateKey is the key redis_rate keeps a budget under: its "rate:" and
// the store's budget key (keys.go).
func rateKey(budget string) string { return "rate:" + budget }
