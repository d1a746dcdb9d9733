package mcp

import "testing"

// TestAReleaseCountsOnce: a call's release frees one place however often
// it is called, and the count of a question nobody waits on leaves the
// map.
func TestAReleaseCountsOnce(t *testing.T) {
	var ws waiters
	first, ok := ws.take("q1", 2)
	if !ok {
		t.Fatal("the first call was refused")
	}
	second, ok := ws.take("q1", 2)
	if !ok {
		t.Fatal("the second call was refused")
	}
	if _, ok := ws.take("q1", 2); ok {
		t.Fatal("a third call was taken past the bound of 2")
	}
	if _, ok := ws.take("q2", 2); !ok {
		t.Fatal("another question's call was refused")
	}
	first()
	first()
	if ws.n["q1"] != 1 {
		t.Fatalf("%d calls counted after one released twice, want 1", ws.n["q1"])
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
	if _, ok := ws.n["q1"]; ok {
		t.Fatalf("the map holds %v once nobody waits on q1", ws.n)
	}
}
