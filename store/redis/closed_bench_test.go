package redis_test

import (
	"context"
	"testing"

	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkSearchClosed is a page of a search of the history (see
// storetest.BenchSearchClosed), on the test server with one shard.
func BenchmarkSearchClosed(b *testing.B) {
	defer flush(b)
	s, err := redisstore.New(context.Background(), sharedClient(), redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.BenchSearchClosed(b, s)
}
