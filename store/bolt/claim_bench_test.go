package bolt_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

// BenchmarkClaimAmongWaiting is one claim that finds nothing due in an
// outbox of 2,000 deliveries each waiting out a retry (a platform
// pushing back on a burst): what every enqueue's wake-up of a blocked
// claim costs while the burst waits on its budget.
func BenchmarkClaimAmongWaiting(b *testing.B) {
	const waiting = 2000
	ctx := b.Context()
	s, _ := openTemp(b, bolt.Options{NoSync: true})
	parkRetried(b, s, waiting, time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if got, err := s.Claim(ctx, core.SurfaceSlack, "c1", 10, time.Hour, 0); err != nil || len(got) != 0 {
			b.Fatalf("claimed %d, %v; want none due", len(got), err)
		}
	}
}
