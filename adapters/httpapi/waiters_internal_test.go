package httpapi

import "testing"

// TestAReleaseCountsOnce: a wait's release frees one place however often
// it is called (a wait may end on more than one path), and the count of
// a question nobody waits on leaves the map.
func TestAReleaseCountsOnce(t *testing.T) {
	var ws waiters
	first, ok := ws.take("q1", 2)
	if !ok {
		t.Fatal("the first wait was refused")
	}
	second, ok := ws.take("q1", 2)
	if !ok {
		t.Fatal("the second wait was refused")
	}
	if _, ok := ws.take("q1", 2); ok {
		t.Fatal("a third wait was taken past the bound of 2")
	}
	first()
	first()
	if ws.n["q1"] != 1 {
		t.Fatalf("%d waits counted after one released twice, want 1", ws.n["q1"])
	}
	third, ok := ws.take("q1", 2)
	if !ok {
		t.Fatal("the freed place was not taken")
	}
	if _, ok := ws.take("q1", 2); ok {
		t.Fatal("a release called twice freed two places")
	}
	second()
	third()
	if len(ws.n) != 0 {
		t.Fatalf("the map holds %v once nobody waits", ws.n)
	}
}
