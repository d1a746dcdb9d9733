package bolt

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/membudget"
)

// TestFullBudgetsAreForgotten: budgets kept for many keys (one per client
// address, say) go once they are full again, and a budget still spent
// stays spent through a sweep.
func TestFullBudgetsAreForgotten(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{Now: clock, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := core.Limit{Rate: 1, Per: time.Minute, Burst: 1}
	ctx := t.Context()
	if wait, err := s.Spend(ctx, "held", l); err != nil || wait != 0 {
		t.Fatalf("first spend: %v %v", wait, err)
	}
	for i := range 2 * membudget.SweepEvery {
		if _, err := s.Spend(ctx, fmt.Sprintf("addr:%d", i), l); err != nil {
			t.Fatal(err)
		}
	}
	if wait, _ := s.Spend(ctx, "held", l); wait <= 0 {
		t.Fatal("a spent budget was forgotten by a sweep")
	}
	mu.Lock()
	now = now.Add(time.Minute) // every budget is full again
	mu.Unlock()
	for range membudget.SweepEvery {
		if _, err := s.Spend(ctx, "again", core.Limit{Rate: 1000, Per: time.Second, Burst: membudget.SweepEvery}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.budgets.Len(); n > 2 {
		t.Fatalf("%d budgets kept after every one but the last was full again", n)
	}
}
