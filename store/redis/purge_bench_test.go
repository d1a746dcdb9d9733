package redis_test

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPurge measures retention: b.N closed questions, each with its
// events (asked, its card's, answered), all dropped by one Purge in
// batches; ns/op is the time per question dropped. A purge plans its
// checkpoint's runs before it drops (purge.lua), so each batch runs the
// script twice.
//
//	go test ./store/redis -run '^$' -bench BenchmarkPurge -benchtime 5000x -count 3
func BenchmarkPurge(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	qs := closable(b, s)
	at := t0.Add(time.Minute)
	for _, q := range qs {
		t := answer(q, "op", at)
		t.Read = q
		if _, err := s.Resolve(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	n, err := s.Purge(ctx, at.Add(time.Hour), 0)
	b.StopTimer()
	if err != nil || n != b.N {
		b.Fatalf("purged %d of %d: %v", n, b.N, err)
	}
}
