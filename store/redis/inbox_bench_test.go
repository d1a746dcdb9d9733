package redis_test

import (
	"context"
	"testing"

	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkOpenPage is the inbox's read (see storetest.BenchOpenPage), on
// the test server with one shard.
func BenchmarkOpenPage(b *testing.B) {
	defer flush(b)
	s, err := redisstore.New(context.Background(), sharedClient(), redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	storetest.BenchOpenPage(b, s)
}
