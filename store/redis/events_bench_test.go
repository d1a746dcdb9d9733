package redis_test

import (
	"context"
	"testing"
	"time"

	redisstore "github.com/askbridge/askbridge/store/redis"
)

// BenchmarkEventsPage reads a page of 100 events by seq, as /v1/events
// and the audit export page the log, from a store of three shards holding
// 300 questions' asked events.
func BenchmarkEventsPage(b *testing.B) {
	defer flush(b)
	s, err := redisstore.New(context.Background(), sharedClient(), redisstore.Options{Prefix: randomPrefix(), Shards: 3})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	now := time.Now()
	for i := range 300 {
		mustCreate(b, s, question(i%3, "run-1", now))
	}
	all, err := s.Events(b.Context(), 0, 0)
	if err != nil || len(all) != 300 {
		b.Fatalf("events: %d, %v", len(all), err)
	}
	since := all[99].Seq
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		page, err := s.Events(b.Context(), since, 100)
		if err != nil || len(page) != 100 {
			b.Fatalf("page: %d, %v", len(page), err)
		}
	}
}
