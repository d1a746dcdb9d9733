package bolt_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/store/bolt"
)

// TestEmptyClaimCostDoesNotGrowWithWaiting: a claim that finds nothing
// due costs the same whether 20 or 2,000 deliveries wait out a retry (a
// burst parked on a platform's rate limit). It used to decode every one
// of them, and each enqueue wakes a claim: a burst of N cards waiting on
// its budget cost N² decodes.
func TestEmptyClaimCostDoesNotGrowWithWaiting(t *testing.T) {
	allocs := func(waiting int) float64 {
		s, _ := openTemp(t, bolt.Options{NoSync: true})
		parkRetried(t, s, waiting, time.Hour)
		return testing.AllocsPerRun(20, func() {
			if got, err := s.Claim(t.Context(), core.SurfaceSlack, "c1", 10, time.Hour, 0); err != nil || len(got) != 0 {
				t.Fatalf("claimed %d, %v; want none due", len(got), err)
			}
		})
	}
	few, many := allocs(20), allocs(2000)
	if many > few+8 {
		t.Errorf("an empty claim among 2,000 waiting deliveries allocates %.0f times, among 20 %.0f: it reads the waiting ones", many, few)
	}
}

// parkRetried enqueues n deliveries to Slack, claims them and retries
// each, due after wait.
func parkRetried(t testing.TB, s *bolt.Store, n int, wait time.Duration) {
	t.Helper()
	ctx := t.Context()
	out := make([]core.Delivery, n)
	for i := range out {
		out[i] = core.Delivery{Key: fmt.Sprintf("q%d/post", i), Kind: core.DeliverPost, Surface: core.SurfaceSlack,
			Room: "C1", QuestionID: core.QuestionID(fmt.Sprintf("q%d", i)), CreatedAt: t0}
	}
	if err := s.Enqueue(ctx, out); err != nil {
		t.Fatal(err)
	}
	got, err := s.Claim(ctx, core.SurfaceSlack, "c1", n, time.Hour, 0)
	if err != nil || len(got) != n {
		t.Fatalf("claimed %d, %v; want %d", len(got), err, n)
	}
	for _, d := range got {
		if err := s.Retry(ctx, d, "c1", wait); err != nil {
			t.Fatal(err)
		}
	}
}
