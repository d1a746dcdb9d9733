package redis_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

func TestOutboxStat(t *testing.T) {
	for _, shards := range []int{1, 3} {
		storetest.OutboxStat(t, func(t *testing.T) core.Store {
			return newStore(t, redisstore.Options{Shards: shards})
		})
	}
}
