package bolt

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

func closedAt(id core.QuestionID, ver int64) *core.Question {
	return &core.Question{ID: id, State: core.StateAnswered, Version: ver}
}

// TestSettledCopiesAreBounded: a copy is kept only while its id is
// watched, and only of a close.
func TestSettledCopiesAreBounded(t *testing.T) {
	var c settledCopies
	const id = core.QuestionID("aaaaaaaaaaaaaaaaa")
	c.wrote(id, 1, closedAt(id, 1))
	if _, ok := c.get(id); ok {
		t.Fatal("kept a copy of an unwatched id")
	}
	c.watch(id)
	c.wrote(id, 1, &core.Question{ID: id, State: core.StateOpen, Version: 1})
	if _, ok := c.get(id); ok {
		t.Fatal("kept a copy of an open question")
	}
	c.wrote(id, 2, closedAt(id, 2))
	if q, ok := c.get(id); !ok || q.Version != 2 {
		t.Fatalf("after the close: %+v, %v", q, ok)
	}
	c.unwatch(id)
	if _, ok := c.get(id); ok || len(c.m) != 0 {
		t.Fatalf("kept %d entries after the last watch stopped", len(c.m))
	}
}

// TestSettledCopiesNeverTrailATold: writes committed together are told
// from their callers' goroutines in any order; an older one told after a
// newer changes nothing, and a purge holds until the watch ends.
func TestSettledCopiesNeverTrailATold(t *testing.T) {
	var c settledCopies
	const id = core.QuestionID("aaaaaaaaaaaaaaaaa")
	c.watch(id)
	c.wrote(id, 3, nil) // a card recorded after the close, told first
	c.wrote(id, 2, closedAt(id, 2))
	if q, ok := c.get(id); ok {
		t.Fatalf("the close told late left a copy of version %d behind version 3", q.Version)
	}
	c.wrote(id, 4, closedAt(id, 4))
	c.purged(id)
	c.wrote(id, 5, closedAt(id, 5))
	if _, ok := c.get(id); ok {
		t.Fatal("a copy after the purge")
	}
}

// TestSettledCopyIsTheCallersOwn: a copy handed out may be changed by its
// taker without changing what is kept, or what the writer holds.
func TestSettledCopyIsTheCallersOwn(t *testing.T) {
	var c settledCopies
	const id = core.QuestionID("aaaaaaaaaaaaaaaaa")
	c.watch(id)
	written := closedAt(id, 1)
	c.wrote(id, 1, written)
	written.State = core.StateOpen
	got, _ := c.get(id)
	got.Version = 9
	if again, _ := c.get(id); again.State != core.StateAnswered || again.Version != 1 {
		t.Fatalf("the kept copy changed with its writer's or taker's: %+v", again)
	}
}
