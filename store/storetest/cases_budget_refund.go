package storetest

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("BudgetRefundGivesOneBack", testRefund)
}

// testRefund: a send given back (core.Refunder, for a request never
// made) can be spent again at once, by this replica or another; a
// refund never fills a budget past its burst, however many come; and it
// gives back to its own budget alone.
func testRefund(t *testing.T, h Harness) {
	e := newEnv(t, h)
	b := e.store.(core.Budget)
	r, ok := e.store.(core.Refunder)
	if !ok {
		t.Fatalf("%T does not give sends back (core.Refunder)", e.store)
	}
	ctx := t.Context()
	l := core.Limit{Rate: 1, Per: time.Minute}
	spend := func(key string, lim core.Limit, want bool) {
		t.Helper()
		w, err := b.Spend(ctx, key, lim)
		if err != nil || (w == 0) != want {
			t.Fatalf("spend from %s: wait %s, %v; want a send: %v", key, w, err, want)
		}
	}
	refund := func(key string, lim core.Limit) {
		t.Helper()
		if err := r.Refund(ctx, key, lim); err != nil {
			t.Fatalf("refund to %s: %v", key, err)
		}
	}
	spend("test:room:A", l, true)
	spend("test:room:B", l, true)
	spend("test:room:A", l, false)
	refund("test:room:A", l)
	if w, err := b.Until(ctx, "test:room:A", l); err != nil || w != 0 {
		t.Fatalf("a budget given its send back: wait %s, %v; want 0", w, err)
	}
	spend("test:room:A", l, true)
	spend("test:room:A", l, false)
	spend("test:room:B", l, false) // B's budget got nothing back

	// A burst spent whole, one given back: one send, then none.
	burst := core.Limit{Rate: 2, Per: time.Minute, Burst: 2}
	spend("test:twice", burst, true)
	spend("test:twice", burst, true)
	spend("test:twice", burst, false)
	refund("test:twice", burst)
	spend("test:twice", burst, true)
	spend("test:twice", burst, false)

	// A full budget stays full: two given back to one never spent, and
	// one given back twice to one that spent one, leave a burst of two
	// sends each, not more.
	refund("test:full", burst)
	refund("test:full", burst)
	spend("test:once", burst, true)
	refund("test:once", burst)
	refund("test:once", burst)
	for _, key := range []string{"test:full", "test:once"} {
		spend(key, burst, true)
		spend(key, burst, true)
		spend(key, burst, false)
	}
	if err := r.Refund(ctx, "test:bad", core.Limit{}); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("a zero limit: %v", err)
	}
}
