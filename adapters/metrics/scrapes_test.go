package metrics_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/askbridge/askbridge/adapters/metrics"
	"github.com/askbridge/askbridge/core"
)

// TestConcurrentScrapesShareOneReading: two scrapes that overlap (the
// two Prometheus servers of an HA pair, say) are answered from one
// reading of the store, both as soon as it is done. Before, the second
// waited for the first's reading and then read the store again itself:
// with a slow store it took twice as long, past the scraper's timeout,
// so that scraper lost every series of the replica, and a burst of
// scrapes on the metrics listener queued one full store reading each,
// which went on after their clients had left.
func TestConcurrentScrapesShareOneReading(t *testing.T) {
	const slow = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		m := metrics.New("dev", metrics.Source{Routes: []string{"ops"}})
		var reads atomic.Int32
		m.SetOpen(func(context.Context, string, int) ([]*core.Question, string, error) {
			reads.Add(1)
			time.Sleep(slow) // a slow store; the bubble's clock passes it at once
			return []*core.Question{{Route: "ops", Reversibility: core.Reversible}}, "", nil
		})
		start := time.Now()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if open := gather(t, m)["askbridge_open_questions"]; open != 1 {
					t.Errorf("a scrape read %v open questions, want 1", open)
				}
			})
		}
		wg.Wait()
		if n, took := reads.Load(), time.Since(start); n != 1 || took != slow {
			t.Errorf("two overlapping scrapes read the store %d times and took %s; want once, %s", n, took, slow)
		}
		// A scrape after the reading is done reads the store afresh.
		gather(t, m)
		if n := reads.Load(); n != 2 {
			t.Errorf("a later scrape: %d readings in all, want 2", n)
		}
	})
}
