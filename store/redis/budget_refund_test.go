package redis_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestRefundOnTheSharedBucket: a send given back (Store.Refund) moves
// the budget's bucket in Redis back by one send, so another replica
// spends it at once; the bucket's expiry still ends when the budget is
// full again; and a budget given back to full is dropped, as redis_rate
// lets a full one expire, so a refund never leaves more than its burst.
func TestRefundOnTheSharedBucket(t *testing.T) {
	c := newClient(t)
	prefix := randomPrefix()
	s := newStoreOn(t, c, redisstore.Options{Prefix: prefix})
	replica := newStoreOn(t, newClient(t), redisstore.Options{Prefix: prefix})
	ctx := t.Context()
	l := core.Limit{Rate: 2, Per: time.Minute, Burst: 2} // a send every 30s
	bucket := "rate:" + prefix + ":budget:test:room"
	spend := func(s *redisstore.Store, want bool) {
		t.Helper()
		if w, err := s.Spend(ctx, "test:room", l); err != nil || (w == 0) != want {
			t.Fatalf("spend: wait %s, %v; want a send: %v", w, err, want)
		}
	}
	refund := func() {
		t.Helper()
		if err := s.Refund(ctx, "test:room", l); err != nil {
			t.Fatal(err)
		}
	}
	spend(s, true)
	spend(s, true)
	spend(replica, false)
	refund()
	if ttl := c.TTL(ctx, bucket).Val(); ttl <= 0 || ttl > 30*time.Second {
		t.Fatalf("the bucket given one of two sends back expires in %s; want when it is full again, within 30s", ttl)
	}
	spend(replica, true)
	spend(replica, false)
	refund()
	refund()
	refund()
	if n := c.Exists(ctx, bucket).Val(); n != 0 {
		t.Fatalf("a budget given back more than it spent is still kept (%d key): full again, it is dropped", n)
	}
	spend(replica, true)
	spend(replica, true)
	spend(replica, false)
}
