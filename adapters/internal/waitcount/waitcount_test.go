package waitcount_test

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/internal/waitcount"
)

// TestAReleaseCountsOnce: a wait's release frees one place however often
// it is called (a wait may end on more than one path), each question is
// counted apart, and a question nobody waits on is forgotten.
func TestAReleaseCountsOnce(t *testing.T) {
	var c waitcount.Counts
	first, ok := c.Take("q1", 2)
	if !ok {
		t.Fatal("the first wait was refused")
	}
	second, ok := c.Take("q1", 2)
	if !ok {
		t.Fatal("the second wait was refused")
	}
	if _, ok := c.Take("q1", 2); ok {
		t.Fatal("a third wait was taken past the bound of 2")
	}
	other, ok := c.Take("q2", 2)
	if !ok {
		t.Fatal("another question's wait was refused")
	}
	first()
	first()
	third, ok := c.Take("q1", 2)
	if !ok {
		t.Fatal("the freed place was not taken")
	}
	if _, ok := c.Take("q1", 2); ok {
		t.Fatal("a release called twice freed two places")
	}
	second()
	third()
	other()
	if n := c.Questions(); n != 0 {
		t.Fatalf("%d questions counted once nobody waits", n)
	}
}
