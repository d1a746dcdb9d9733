package bolt_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkOpen opens and closes a store file holding
// storetest.BenchOpen() open questions (ASKBRIDGE_BENCH_OPEN), as the
// bridge opens it at start: what the check of the whole file at open
// (openChecked) costs a start, the file in the page cache.
func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "open.db")
	seed, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	n := storetest.BenchOpen()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	storetest.Parallel(b, 16, n, func(int64) error { return storetest.CreateBenchQuestion(ctx, seed, at) })
	if err := seed.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		s, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "open")
}
