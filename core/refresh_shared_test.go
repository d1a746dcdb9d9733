package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// cardsRace is a store that, once armed, runs meanwhile right after the
// at-th read of the cards' record (core's "core:cards" value) has read
// it and before its reader has the value: another replica's tick lands
// between a replica's read of the record and its write.
type cardsRace struct {
	core.Store
	mu        sync.Mutex
	reads, at int
	meanwhile func()
}

func (s *cardsRace) arm(at int, meanwhile func()) {
	s.mu.Lock()
	s.reads, s.at, s.meanwhile = 0, at, meanwhile
	s.mu.Unlock()
}

// fired reports whether the armed meanwhile has run.
func (s *cardsRace) fired() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meanwhile == nil
}

func (s *cardsRace) Value(ctx context.Context, key string) (string, error) {
	v, err := s.Store.Value(ctx, key)
	if key != "core:cards" {
		return v, err
	}
	s.mu.Lock()
	var f func()
	if s.reads++; s.reads == s.at {
		f, s.meanwhile = s.meanwhile, nil
	}
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return v, err
}

// startOn is start over st, a wrapper of the replicas' store.
func (r *replicas) startOn(st core.Store, members ...string) *core.Service {
	r.t.Helper()
	svc, err := core.New(st, postedVoters(members...), r.clock)
	if err != nil {
		r.t.Fatal(err)
	}
	return svc
}

// TestALaggardJoiningAsTheSweepEndsIsNotLost: a replica still on the old
// file says it lags between the sweep's last read of the cards' record
// and its clearing of the debt; it has rendered the sweep's edit with
// the old tally, so once it has reloaded the sweep runs again. Before,
// the clearing wrote over the laggard's word (the record was read, then
// written), no sweep ran again, and the card kept counting alice's vote.
func TestALaggardJoiningAsTheSweepEndsIsNotLost(t *testing.T) {
	r := newReplicas(t)
	race := &cardsRace{Store: r.st}
	a, b := r.startOn(race, "alice", "bob", "carol"), r.start("alice", "bob", "carol")
	r.ask(a)
	r.tick(a, b)
	r.clock.Advance(time.Second)
	r.reload(a, "bob", "carol")
	// a's tick reads the record to reconcile, then again to end the
	// sweep: b says it lags in between.
	race.arm(2, func() { r.tick(b) })
	r.tick(a)
	if !race.fired() {
		t.Fatal("b's tick never ran between a's reads of the cards' record")
	}
	if edits := r.deliver(b); edits != 1 || r.card(b) != aliceCounts {
		t.Fatalf("b, lagging, rendered %d edits, the card %q", edits, r.card(b))
	}
	r.reload(b, "bob", "carol")
	r.clock.Advance(time.Minute)
	for range 3 {
		r.tick(a, b)
		r.deliver(b)
	}
	if got := r.card(b); got != aliceCountsNot {
		t.Errorf("once b reloaded, the card shows %q; want %q", got, aliceCountsNot)
	}
}

// TestAnOlderFileDoesNotOverwriteANewerOnesRecord: a replica that put a
// file in force before another put a newer one in force, and that read
// the cards' record before the other's sweep, does not write its file
// over the newer one once that sweep has finished: it lags, and the
// card is edited once. Before, it recorded its older file as the one the
// cards are drawn under, swept them to its tally, and the other replica
// swept them all again.
func TestAnOlderFileDoesNotOverwriteANewerOnesRecord(t *testing.T) {
	r := newReplicas(t)
	race := &cardsRace{Store: r.st}
	x, y := r.start("alice", "bob", "carol"), r.startOn(race, "alice", "bob", "carol")
	r.ask(x)
	r.tick(x, y)
	r.clock.Advance(time.Second)
	r.reload(y, "bob", "carol", "dave") // the older of the two new files
	r.clock.Advance(time.Second)
	r.reload(x, "bob", "carol") // the newer
	// x's whole tick (its record, its sweep, the debt cleared) runs
	// between y's read of the record and y's write.
	race.arm(1, func() { r.tick(x) })
	r.tick(y)
	if !race.fired() {
		t.Fatal("x's tick never ran between y's read of the cards' record and its write")
	}
	edits := r.deliver(x)
	r.tick(x, y, x, y)
	edits += r.deliver(x)
	if got := r.card(x); edits != 1 || got != aliceCountsNot {
		t.Errorf("the card was edited %d times, showing %q; want once, showing %q", edits, got, aliceCountsNot)
	}
}

// TestALaggardTakesOverOnceTheRecordedFilesReplicasStop: a replica
// started later under an older file records it as the one the cards are
// drawn under, and the replica under the newer file lags behind it
// (their clocks order them) and holds the sweep off while it runs,
// joining the debt once and otherwise leaving the record alone. Once
// that replica has stopped, the one left takes the record over and
// sweeps the cards to its own tally. Before, it lagged for good: its
// word that it lags never lapsed while it ran, no sweep ran, and the
// card showed the stopped replica's tally.
func TestALaggardTakesOverOnceTheRecordedFilesReplicasStop(t *testing.T) {
	r := newReplicas(t)
	w := &cardsWrites{Store: r.st}
	r.st = w
	a := r.start("alice", "bob", "carol")
	r.ask(a)
	r.tick(a)
	r.clock.Advance(time.Second)
	r.reload(a, "bob", "carol")
	r.tick(a)
	if edits := r.deliver(a); edits != 1 || r.card(a) != aliceCountsNot {
		t.Fatalf("after a's reload: %d edits, the card %q", edits, r.card(a))
	}
	r.clock.Advance(time.Minute)
	c := r.start("alice", "bob", "carol") // a replica started on the old file
	r.tick(c)
	if edits := r.deliver(c); edits != 1 || r.card(c) != aliceCounts {
		t.Fatalf("after c's start: %d edits, the card %q", edits, r.card(c))
	}
	// While c runs, a lags behind it: however long, nothing is edited,
	// and a writes the record once, to join the debt.
	before := w.n.Load()
	for range 12 {
		r.clock.Advance(10 * time.Second)
		r.tick(a, c)
	}
	if edits, writes := r.deliver(a), w.n.Load()-before; edits != 0 || writes != 1 {
		t.Fatalf("while c ran, %d edits and %d writes of the cards' record; want none and one", edits, writes)
	}
	// c stops; a, alone, ends up with the cards showing its tally.
	for range 12 {
		r.clock.Advance(10 * time.Second)
		r.tick(a)
	}
	if edits := r.deliver(a); edits != 1 || r.card(a) != aliceCountsNot {
		t.Errorf("after c stopped: %d edits, the card %q; want one edit, showing %q", edits, r.card(a), aliceCountsNot)
	}
}
