package redis

import (
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestReadRacingAWakeUpKeepsNoCopy: what a read returns becomes a fresh
// copy only if no wake-up for its question, and no later read, came while
// it was on its way, and only for a question still watched and open.
func TestReadRacingAWakeUpKeepsNoCopy(t *testing.T) {
	s := &Store{watchers: make(map[core.QuestionID]map[*watcher]struct{}), resolvingN: make(map[core.QuestionID]int), kept: newCopies()}
	s.subscribed.Store(true)
	open := &core.Question{ID: "q1", State: core.StateOpen}
	ch, stop := s.Watch(open.ID)
	defer stop()

	if tk := s.readStarts("unwatched"); tk != nil {
		t.Fatal("a read of an unwatched question was given a ticket")
	}

	tk := s.readStarts(open.ID)
	s.wakeRemote(open.ID) // a change elsewhere, announced while the read is out
	s.readEnds(open.ID, tk, open)
	if _, ok := s.freshCopy(open.ID); ok {
		t.Fatal("a read overtaken by a wake-up was kept")
	}
	<-ch

	first := s.readStarts(open.ID)
	second := s.readStarts(open.ID)
	s.readEnds(open.ID, first, open)
	if _, ok := s.freshCopy(open.ID); ok {
		t.Fatal("an earlier read was kept over a later one still out")
	}
	s.readEnds(open.ID, second, open)
	got, ok := s.freshCopy(open.ID)
	if !ok || got.ID != open.ID || got == open {
		t.Fatalf("the latest read: kept %v (%p), want a copy of %p", ok, got, open)
	}

	s.wakeAll() // a resubscription: wake-ups may have been lost
	if _, ok := s.freshCopy(open.ID); ok {
		t.Fatal("a fresh copy outlived a resubscription")
	}

	s.distrust() // the subscription's pong did not come back
	tk = s.readStarts(open.ID)
	s.readEnds(open.ID, tk, open)
	if _, ok := s.freshCopy(open.ID); ok {
		t.Fatal("a read was kept while the subscription was in doubt")
	}
	s.subscribed.Store(true) // something arrived again (listen)
	tk = s.readStarts(open.ID)
	s.readEnds(open.ID, tk, open)
	if _, ok := s.freshCopy(open.ID); !ok {
		t.Fatal("no copy was kept once the subscription answered again")
	}
	s.wakeAll()

	closed := &core.Question{ID: open.ID, State: core.StateAnswered}
	tk = s.readStarts(open.ID)
	s.readEnds(open.ID, tk, closed)
	if _, ok := s.freshCopy(open.ID); ok {
		t.Fatal("a closed question was kept as a fresh copy")
	}

	tk = s.readStarts(open.ID)
	stop()
	s.readEnds(open.ID, tk, open)
	if _, ok := s.freshCopy(open.ID); ok {
		t.Fatal("a copy was kept after the last watcher stopped")
	}
}
