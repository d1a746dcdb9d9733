package redis_test

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/store/storetest"
)

// TestConformance holds the Redis store to the behaviour every store
// shares.
func TestConformance(t *testing.T) {
	h := &harness{client: func(t *testing.T) goredis.UniversalClient { return newClient(t) }}
	storetest.Run(t, storetest.Harness{Open: h.Open, Reopen: h.Reopen, Replica: h.Replica, Clocked: h.Clocked})
}
