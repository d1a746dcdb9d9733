package bolt_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
	"github.com/askbridge/askbridge/store/storetest"
)

// BenchmarkResolve closes b.N distinct open questions, each with one
// posted card, from 50 concurrent resolvers: the chokepoint's cost as the
// embedded store pays it (state check, resolution, close event, index
// moves and one card-update delivery, in one committed transaction).
// "fsync" is the real configuration; "nosync" shows what the disk costs.
func BenchmarkResolve(b *testing.B) {
	for _, bc := range []struct {
		name   string
		noSync bool
	}{{"fsync", false}, {"nosync", true}} {
		b.Run(bc.name, func(b *testing.B) { benchResolve(b, bc.noSync) })
	}
}

func benchResolve(b *testing.B, noSync bool) {
	const resolvers = 50
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "bench.db")

	// Seed without fsync, then reopen as configured for the timed part.
	seed, err := bolt.Open(path, bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	qs := make([]*core.Question, b.N)
	for i := range qs {
		q := question(time.Duration(i)*time.Millisecond, core.Reversible)
		q.Messages = []core.MessageRef{{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.1", Delivery: string(q.ID) + "/post", At: q.CreatedAt}}
		if err := seed.Create(ctx, q, asked(q), nil); err != nil {
			b.Fatal(err)
		}
		qs[i] = q
	}
	if err := seed.Close(); err != nil {
		b.Fatal(err)
	}
	s, err := bolt.Open(path, bolt.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()

	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for r := range resolvers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(qs)) {
					return
				}
				if _, err := s.Resolve(ctx, answer(qs[i], "r"+string(rune('a'+r%26)), t0.Add(time.Hour))); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "resolves/s")
}

// BenchmarkBoot is the boot with storetest.BenchOpen() open questions, no
// downtime and after one (see storetest.BenchBoot), on a file seeded
// without fsync and then opened as the bridge opens it.
func BenchmarkBoot(b *testing.B) {
	path := filepath.Join(b.TempDir(), "boot.db")
	storetest.BenchBoot(b, func(b *testing.B, seeding bool) core.Store {
		s, err := bolt.Open(path, bolt.Options{NoSync: seeding})
		if err != nil {
			b.Fatal(err)
		}
		if !seeding {
			b.Cleanup(func() { _ = s.Close() })
		}
		return s
	})
}
