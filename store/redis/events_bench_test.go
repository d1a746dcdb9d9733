package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
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

// BenchmarkQuestionEventsOfALongHistory reads the first 1,000 events of a
// question with 3,000 (one refused again and again), as the console's
// question page does for each page of its history.
func BenchmarkQuestionEventsOfALongHistory(b *testing.B) {
	defer flush(b)
	s, err := redisstore.New(context.Background(), sharedClient(), redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	now := time.Now()
	q := question(0, "run-1", now)
	mustCreate(b, s, q)
	for range 2999 {
		if _, err := s.Append(b.Context(), event(q, core.EventReminded, now)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		evs, err := s.QuestionEvents(b.Context(), q.ID, 1000)
		if err != nil || len(evs) != 1000 {
			b.Fatalf("events: %d, %v", len(evs), err)
		}
	}
}
