package redis_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestDurableLeaseWaitsForItsReplicas: with durability on, a lease (a
// card's posting mark) is confirmed only once its replicas hold it; here
// none does, so it is reported maybe-taken, as a close is. Before, it was
// confirmed at once: a failover could lose the mark of a card already
// posted, and the retry then posted a second card unflagged.
func TestDurableLeaseWaitsForItsReplicas(t *testing.T) {
	s := newStore(t, redisstore.Options{Prefix: randomPrefix(), Durability: redisstore.Durability{Replicas: 1, Timeout: 100 * time.Millisecond}})
	held, err := s.Lease(t.Context(), "posting:q1:post:slack:C1", "owner-1", time.Hour)
	if !core.Unavailable(err) {
		t.Fatalf("a posting mark no replica holds: %v, %v; want a maybe-taken error", held, err)
	}
}
