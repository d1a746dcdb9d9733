package redis_test

import "testing"

// TestReplayedSetValueIfIsSet: a SetValueIf whose first run's reply was
// lost, and which go-redis therefore sent again, is told it set the
// value (the second run finds its own write), not that another value
// was there; a caller still holding the value read before it is refused.
func TestReplayedSetValueIfIsSet(t *testing.T) {
	p, a, b := replayed(t)
	if _, err := b.SetValueIf(t.Context(), "warm", "", "w"); err != nil { // Redis has the script by then
		t.Fatal(err)
	}
	if ok, err := b.SetValueIf(t.Context(), "core:cards", "", "v0"); err != nil || !ok {
		t.Fatalf("the first value: %v, %v", ok, err)
	}
	p.arm("value-replayed")
	ok, err := a.SetValueIf(t.Context(), "core:cards", "v0", "value-replayed")
	mustHaveCut(t, p)
	if err != nil || !ok {
		t.Fatalf("the replayed set: %v, %v; want it set", ok, err)
	}
	if ok, err := b.SetValueIf(t.Context(), "core:cards", "v0", "another"); err != nil || ok {
		t.Fatalf("a set over the value read before it: %v, %v; want refused", ok, err)
	}
	if v, err := b.Value(t.Context(), "core:cards"); err != nil || v != "value-replayed" {
		t.Fatalf("the value: %q, %v", v, err)
	}
}
