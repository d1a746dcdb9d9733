package storetest

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/procmem"
)

// BenchOpen is how many open questions the boot benchmark parks:
// ASKBRIDGE_BENCH_OPEN, or 100,000.
func BenchOpen() int {
	return benchCount("ASKBRIDGE_BENCH_OPEN", 100_000)
}

// benchCount is the positive whole number in the environment variable
// name, or def when it holds none.
func benchCount(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Parallel runs each(i) for i from 1 to n from workers goroutines, as
// the benchmarks fill a store, and fails b with the first error.
func Parallel(b *testing.B, workers, n int, each func(i int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := each(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}

// catchUpper is core.Service's background re-notification, where the
// service has it.
type catchUpper interface {
	CatchUp(ctx context.Context, owner string) (int, bool, error)
}

// CreateBenchQuestion stores in st the open question the boot benchmarks
// park, asked at at, with its asked event.
func CreateBenchQuestion(ctx context.Context, st core.Store, at time.Time) error {
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "agent", RunID: "run-1",
		Text: "Which region should the new cluster run in?", Reversibility: core.Reversible, Route: "ops",
		CreatedAt: at, Deadline: at.Add(24 * time.Hour), Timeout: core.Duration(24 * time.Hour),
		OnTimeout: core.OnTimeoutDeny, State: core.StateOpen}
	return st.Create(ctx, q, core.Event{QuestionID: q.ID, RunID: q.RunID, At: at, Kind: core.EventAsked}, nil)
}

// BenchBoot measures how long a bridge takes to be ready (Boot returns,
// so the program serves) with BenchOpen() open questions, after a short
// gap and after a downtime that makes every question due for a reminder,
// and how long the reminders then take to be stored behind it. open
// returns the store: seeding is true for the one that is filled (it may
// skip fsync; BenchBoot closes it) and false for the one that is timed,
// which must see the same data. Run it with -benchtime 1x.
func BenchBoot(b *testing.B, open func(b *testing.B, seeding bool) core.Store) {
	ctx := context.Background()
	n := BenchOpen()
	now := time.Now().UTC().Truncate(time.Millisecond)
	seedStore := open(b, true)
	Parallel(b, 16, n, func(i int64) error {
		return CreateBenchQuestion(ctx, seedStore, now.Add(-3*time.Hour).Add(time.Duration(i)*time.Millisecond))
	})
	if err := seedStore.Close(); err != nil {
		b.Fatal(err)
	}
	st := open(b, false)
	svc, err := core.New(st, config("bench-key"), nil)
	if err != nil {
		b.Fatal(err)
	}
	boot := func(b *testing.B, away time.Duration) {
		if _, err := st.Beat(ctx, time.Now().Add(-away)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		rep, err := svc.Boot(ctx)
		ready := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if (rep.Down > 0) != (away > core.DefaultDowntimeThreshold) {
			b.Fatalf("boot after %s reported downtime %s", away, rep.Down)
		}
		b.ReportMetric(float64(ready.Microseconds())/1000, "ready-ms")
		b.ReportMetric(float64(n), "open")
		if cu, ok := any(svc).(catchUpper); ok && rep.Down > 0 {
			reminded, done, err := cu.CatchUp(ctx, "bench")
			if err != nil || !done || reminded != n {
				b.Fatalf("catch-up: %d of %d reminded, done %v, %v", reminded, n, done, err)
			}
			b.ReportMetric(time.Since(start).Seconds(), "caught-up-s")
		}
	}
	b.Run("no-downtime", func(b *testing.B) {
		for range b.N {
			boot(b, time.Minute)
		}
		// What the process holds once booted with them all open: the
		// seeding's garbage collected and handed back first.
		runtime.GC()
		debug.FreeOSMemory()
		anon, file := procmem.Resident()
		b.ReportMetric(float64(anon)/(1<<20), "rss-anon-MB")
		b.ReportMetric(float64(file)/(1<<20), "rss-file-MB")
	})
	b.Run("after-downtime", func(b *testing.B) {
		for range b.N {
			boot(b, core.DefaultDowntimeThreshold+time.Hour)
		}
	})
}
