package bolt_test

import (
	"context"
	"fmt"
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
	ctx := context.Background()
	s, _ := openTemp(b, bolt.Options{NoSync: true})
	out := make([]core.Delivery, waiting)
	for i := range out {
		out[i] = core.Delivery{Key: fmt.Sprintf("q%d/post", i), Kind: core.DeliverPost, Surface: core.SurfaceSlack,
			Room: "C1", QuestionID: core.QuestionID(fmt.Sprintf("q%d", i)), CreatedAt: t0}
	}
	if err := s.Enqueue(ctx, out); err != nil {
		b.Fatal(err)
	}
	got, err := s.Claim(ctx, core.SurfaceSlack, "c1", waiting, time.Hour, 0)
	if err != nil || len(got) != waiting {
		b.Fatalf("claimed %d, %v; want %d", len(got), err, waiting)
	}
	for _, d := range got {
		if err := s.Retry(ctx, d, "c1", time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if got, err := s.Claim(ctx, core.SurfaceSlack, "c1", 10, time.Hour, 0); err != nil || len(got) != 0 {
			b.Fatalf("claimed %d, %v; want none due", len(got), err)
		}
	}
}
