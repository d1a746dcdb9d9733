package redis

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// The tests of readCache's invariants, one each, as its doc states them.
// The behaviour through a Store (Get, ReadToChange, Watch across
// replicas) is tested in copies_ext_test.go and waker_test.go.

func openQ(id core.QuestionID, version int64) *core.Question {
	return &core.Question{ID: id, State: core.StateOpen, Version: version}
}

func closedQ(id core.QuestionID, version int64) *core.Question {
	return &core.Question{ID: id, State: core.StateAnswered, Version: version,
		Resolution: &core.Resolution{Answer: "yes"}}
}

// keep is a read of id that returned q with nothing in between.
func keep(c *readCache, q *core.Question) { c.readEnds(q.ID, c.readStarts(q.ID), q) }

func mustFresh(t *testing.T, c *readCache, id core.QuestionID, version int64, why string) {
	t.Helper()
	got, ok := c.freshCopy(id)
	if !ok || got.Version != version {
		t.Fatalf("%s: fresh copy %+v (%v), want one at version %d", why, got, ok, version)
	}
}

func mustNoFresh(t *testing.T, c *readCache, id core.QuestionID, why string) {
	t.Helper()
	if got, ok := c.freshCopy(id); ok {
		t.Fatalf("%s: a fresh copy at version %d was kept", why, got.Version)
	}
}

// TestCacheKeepsOnlyWatchedIDs: nothing is kept of an unwatched id, and
// the last watcher's stop drops all of it, so the entries never outnumber
// the watched ids.
func TestCacheKeepsOnlyWatchedIDs(t *testing.T) {
	c := newReadCache()
	if tk := c.readStarts("q1"); tk != nil {
		t.Fatal("a read of an unwatched id was given a ticket")
	}
	c.endWrite(c.beginWrite("q1"), closedQ("q1", 2))
	if _, ok := c.settledCopy("q1"); ok || c.size() != 0 {
		t.Fatalf("an unwatched close was kept (%d entries)", c.size())
	}

	for i := range 100 {
		id := core.QuestionID(fmt.Sprintf("q%d", i))
		c.watch(id)
		c.watch(id) // a second watcher of the same id
		keep(c, openQ(id, 1))
	}
	if n := c.size(); n != 100 {
		t.Fatalf("%d entries for 100 watched ids", n)
	}
	c.endWrite(c.beginWrite("q7"), closedQ("q7", 2))
	for i := range 100 {
		c.unwatch(core.QuestionID(fmt.Sprintf("q%d", i)))
	}
	if n := c.size(); n != 0 {
		t.Fatalf("%d entries left after every watch stopped", n)
	}
	if _, ok := c.settledCopy("q7"); ok {
		t.Fatal("a settled copy outlived its last watcher")
	}
	mustNoFresh(t, c, "q3", "after the last watcher stopped")

	c.watch("q1")
	tk := c.readStarts("q1")
	c.unwatch("q1")
	c.watch("q1") // watched again while the read was out
	c.readEnds("q1", tk, openQ("q1", 1))
	mustNoFresh(t, c, "q1", "a read from before the last watcher stopped")
}

// TestCacheReadRacingAWakeUp: what a read returns is kept only if no
// wake-up, later read or write of this Store's came while it was out, and
// only an open question; what is kept carries its version and is the
// caller's own copy.
func TestCacheReadRacingAWakeUp(t *testing.T) {
	c := newReadCache()
	c.watch("q1")

	tk := c.readStarts("q1")
	c.remote("q1") // a change elsewhere, announced while the read is out
	c.readEnds("q1", tk, openQ("q1", 1))
	mustNoFresh(t, c, "q1", "a read overtaken by a wake-up")

	first, second := c.readStarts("q1"), c.readStarts("q1")
	c.readEnds("q1", first, openQ("q1", 1))
	mustNoFresh(t, c, "q1", "an earlier read while a later one is out")
	c.readEnds("q1", second, openQ("q1", 2))
	mustFresh(t, c, "q1", 2, "the latest read")

	got, _ := c.freshCopy("q1")
	got.Version, got.State = 99, core.StateDeclined
	mustFresh(t, c, "q1", 2, "after the caller changed its copy")

	in := openQ("q1", 3)
	keep(c, in)
	in.Version = 98
	mustFresh(t, c, "q1", 3, "after the reader changed what it read")

	c.remote("q1")
	mustNoFresh(t, c, "q1", "after a wake-up")

	tk = c.readStarts("q1")
	w := c.beginWrite("q1") // this Store writes while the read is out
	c.readEnds("q1", tk, openQ("q1", 3))
	c.endWrite(w, openQ("q1", 4))
	mustNoFresh(t, c, "q1", "a read overtaken by this Store's write")

	keep(c, closedQ("q1", 5))
	mustNoFresh(t, c, "q1", "a closed question")
	if _, ok := c.settledCopy("q1"); ok {
		t.Fatal("a read became a settled copy; only this Store's close makes one")
	}
	c.readEnds("q1", c.readStarts("q1"), nil) // a failed read
	mustNoFresh(t, c, "q1", "a failed read")
}

// TestCacheLostReplyKeepsNothing: a write whose outcome is unknown (the
// script failed, or its reply was lost after it ran) drops what was kept
// and keeps nothing, so no copy can lead the store or trail it unseen.
func TestCacheLostReplyKeepsNothing(t *testing.T) {
	c := newReadCache()
	c.watch("q1")
	keep(c, openQ("q1", 1))
	c.endWrite(c.beginWrite("q1"), nil)
	mustNoFresh(t, c, "q1", "after a write with a lost reply")
	if _, ok := c.settledCopy("q1"); ok {
		t.Fatal("a write with a lost reply left a settled copy")
	}

	c.endWrite(c.beginWrite("q1"), closedQ("q1", 2))
	c.endWrite(c.beginWrite("q1"), nil) // a later write of a closed question, reply lost
	if _, ok := c.settledCopy("q1"); ok {
		t.Fatal("a settled copy outlived a later write whose reply was lost")
	}
}

// TestCacheSettledCopy: this Store's close leaves the question as it
// closed it for every read; a wake-up from pub/sub keeps it (a question
// closes once), this Store's next write drops it, and it is never handed
// out as a fresh copy to build a change on.
func TestCacheSettledCopy(t *testing.T) {
	c := newReadCache()
	c.watch("q1")
	keep(c, openQ("q1", 1))
	c.endWrite(c.beginWrite("q1"), closedQ("q1", 2))
	got, ok := c.settledCopy("q1")
	if !ok || got.Version != 2 || got.Open() {
		t.Fatalf("after the close: settled %+v (%v), want the close at version 2", got, ok)
	}
	mustNoFresh(t, c, "q1", "after the close")
	got.State = core.StateOpen
	if again, _ := c.settledCopy("q1"); again.Open() {
		t.Fatal("a caller's change reached the settled copy")
	}

	c.remote("q1") // the close's echo, or a card recorded elsewhere
	if _, ok := c.settledCopy("q1"); !ok {
		t.Fatal("a wake-up dropped the settled copy")
	}
	c.lost()
	if _, ok := c.settledCopy("q1"); !ok {
		t.Fatal("a resubscription dropped the settled copy")
	}
	c.wrote("q1") // a card recorded here after the close
	if _, ok := c.settledCopy("q1"); ok {
		t.Fatal("this Store's write after the close kept the settled copy")
	}

	c.endWrite(c.beginWrite("q1"), openQ("q1", 2)) // a vote, still open
	if _, ok := c.settledCopy("q1"); ok {
		t.Fatal("an open question became a settled copy")
	}
	mustNoFresh(t, c, "q1", "after this Store's write left it open")
}

// TestCacheEchoSuppression: while a write of this Store's own is in
// flight, a wake-up for its question is not passed on (its caller signals
// after the write); otherwise, and for unwatched ids, every wake-up is.
func TestCacheEchoSuppression(t *testing.T) {
	c := newReadCache()
	if !c.remote("other") {
		t.Fatal("a wake-up for an unwatched id was suppressed")
	}
	c.watch("q1")
	if !c.remote("q1") {
		t.Fatal("a wake-up with no write in flight was suppressed")
	}
	w1 := c.beginWrite("q1")
	w2 := c.beginWrite("q1")
	if c.remote("q1") {
		t.Fatal("the echo of a write in flight was passed on")
	}
	c.endWrite(w1, nil)
	if c.remote("q1") {
		t.Fatal("the echo was passed on while a second write was in flight")
	}
	c.endWrite(w2, closedQ("q1", 3))
	if !c.remote("q1") {
		t.Fatal("a wake-up after every write ended was suppressed")
	}

	// A write that began before the last watcher stopped ends after a new
	// watch began: it neither suppresses the new entry's wake-ups nor
	// counts it below zero.
	old := c.beginWrite("q1")
	c.unwatch("q1")
	c.watch("q1")
	if !c.remote("q1") {
		t.Fatal("a write from before the rewatch suppressed a wake-up")
	}
	c.endWrite(old, nil)
	w := c.beginWrite("q1")
	if c.remote("q1") {
		t.Fatal("the echo of a write in flight was passed on after an earlier write's end")
	}
	c.endWrite(w, nil)
}

// TestCacheInDoubt: a subscription that may have lost wake-ups drops
// every fresh copy; while it is in doubt no read is kept, nor is a read
// that went out in doubt and ended after trust came back.
func TestCacheInDoubt(t *testing.T) {
	c := newReadCache()
	c.watch("q1")
	c.watch("q2")
	keep(c, openQ("q1", 1))
	c.endWrite(c.beginWrite("q2"), closedQ("q2", 2))
	c.lost()
	mustNoFresh(t, c, "q1", "after a resubscription")
	if _, ok := c.settledCopy("q2"); !ok {
		t.Fatal("a resubscription dropped a settled copy")
	}

	keep(c, openQ("q1", 1))
	c.distrust()
	mustNoFresh(t, c, "q1", "once the subscription was in doubt")
	keep(c, openQ("q1", 1))
	mustNoFresh(t, c, "q1", "a read while in doubt")

	tk := c.readStarts("q1")
	c.trust()
	c.readEnds("q1", tk, openQ("q1", 1))
	mustNoFresh(t, c, "q1", "a read that went out in doubt")
	keep(c, openQ("q1", 2))
	mustFresh(t, c, "q1", 2, "a read once trust came back")
	c.trust() // again: nothing changes
	mustFresh(t, c, "q1", 2, "a second trust")
}

// TestCacheNeverHandsOutWhatAWakeUpOutdated races readers against
// changes: each change moves a version counter (the store) on and then
// announces it (remote); once the announcement has returned, no fresh
// copy older than that version may be handed out, and none ever leads the
// counter, whatever the readers were doing in between.
func TestCacheNeverHandsOutWhatAWakeUpOutdated(t *testing.T) {
	c := newReadCache()
	c.watch("q1")
	var stored atomic.Int64
	stored.Store(1)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				tk := c.readStarts("q1")
				c.readEnds("q1", tk, openQ("q1", stored.Load())) // Redis's answer
			}
		})
	}
	var errs []string
	for range 20000 {
		v := stored.Add(1)
		c.remote("q1")
		if got, ok := c.freshCopy("q1"); ok && (got.Version < v || got.Version > stored.Load()) {
			errs = append(errs, fmt.Sprintf("version %d handed out after version %d was announced", got.Version, v))
		}
	}
	close(stop)
	readers.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d stale copies handed out, first: %s", len(errs), errs[0])
	}
}
