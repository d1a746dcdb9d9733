package audit_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// unchained is e without its chain, as someone who can write the store
// (but has not the key) leaves an event they forge or strip.
func unchained(e core.Event) core.Event {
	e.Chain = nil
	return e
}

// TestUnchainedEventsAreABreak: a log chained since its beginning never
// holds an event without a chain, so any such event is a break unless
// the walk is told the log began before the chain (AllowUnchained).
// Before, every unchained event ahead of the first chained one was
// taken as written before the chain began: an event forged into a seq a
// purge freed before the first chained one, or every chain stripped and
// an event edited, verified (the latter as Unchained: 10, Break: nil).
func TestUnchainedEventsAreABreak(t *testing.T) {
	log := chainLog(t, 10, 1)
	heads := verify(t, log, audit.Options{}).Heads

	// Seq 1 purged, and an unchained event forged into its seq.
	purged := purge(t, log, 1) // seqs 2..10 and the checkpoint at 11
	forged := unchained(log[0])
	forged.Reason = "forged"
	withForged := append([]core.Event{forged}, purged...)
	for name, opt := range map[string]audit.Options{"alone": {}, "with heads": {Heads: heads}, "export": {MidChain: true}} {
		rep := verify(t, withForged, opt)
		wantBreak(t, rep, 1, "not chained")
		if !rep.Break.Unchained {
			t.Fatalf("%s: the break does not say the event is unchained: %+v", name, rep.Break)
		}
	}

	// Every chain stripped, and one event edited.
	stripped := make([]core.Event, len(log))
	for i, e := range log {
		stripped[i] = unchained(e)
	}
	stripped[4].Actor = "p-someone-else"
	wantBreak(t, verify(t, stripped, audit.Options{}), 1, "not chained")

	// Told the log began before the chain, the walk takes unchained
	// events ahead of the first chained one as not covered, as before,
	// and still breaks at one after it.
	older := append(stripped[:3:3], chainLog(t, 7, 1)...)
	for i := range older {
		older[i].Seq = int64(i + 1)
	}
	if rep := verify(t, older, audit.Options{}); rep.Break == nil || rep.Break.Seq != 1 {
		t.Fatalf("a log begun before the chain, not allowed: %+v", rep)
	}
	rep := verify(t, older, audit.Options{AllowUnchained: true})
	if rep.Break != nil || rep.Unchained != 3 || rep.Events != 10 {
		t.Fatalf("a log begun before the chain, allowed: %+v", rep)
	}
	late := append(append([]core.Event(nil), older...), unchained(older[5]))
	late[len(late)-1].Seq = 11
	wantBreak(t, verify(t, late, audit.Options{AllowUnchained: true}), 11, "comes after chained events")
}

// TestCopiedEventIsARepeat: someone who can write the store but has not
// the key appends a copy of an earlier event to a stream's end and
// recomputes its link (unkeyed): its keyed digest, which covers the
// event and its witness but not its position, is the original's, and a
// digest repeated within a stream is a break. Before, the copy verified,
// even against the heads of an earlier walk (Witnessed: 10, Break: nil).
func TestCopiedEventIsARepeat(t *testing.T) {
	for _, lag := range []int{1, 3} {
		log := chainLog(t, 10, lag)
		heads := verify(t, log, audit.Options{}).Heads
		last := log[9].Chain
		cp := log[3] // seq 4
		c := *cp.Chain
		c.N, c.Prev = 11, last.Hash
		c.Hash = audit.Link(c.Prev, c.N, c.Digest, c.Purged)
		cp.Seq, cp.Chain = 11, &c
		copied := append(append([]core.Event(nil), log...), cp)
		for _, opt := range []audit.Options{{}, {Heads: heads}, {MidChain: true}} {
			wantBreak(t, verify(t, copied, opt), 11, "repeats the keyed digest of the event at position 4")
		}
		// The same as two exports, the copy in the later one.
		if rep := verify(t, copied[:6], audit.Options{MidChain: true}); rep.Break != nil {
			t.Fatalf("lag %d: the first export: %+v", lag, rep)
		}
		wantBreak(t, verify(t, copied, audit.Options{MidChain: true, Heads: map[int]string{0: "6:" + log[5].Chain.Hash}}), 11, "repeats")
	}
}

// TestRenumberedBeginningIsABreak: someone who can write the store but
// has not the key deletes a stream's first events, then renumbers the
// rest past every position they witness and recomputes their links
// (positions and links are unkeyed), so that the first left links to
// nothing, as a stream's first event does. Nothing precedes a stream's
// first event, so an event witnessing a position before it is a break.
// Before, a witness before the walk's first event was taken as one the
// walk could not check, and the cut log verified as whole (Break: nil,
// Witnessed: 0), even with every event required from the beginning.
func TestRenumberedBeginningIsABreak(t *testing.T) {
	for _, lag := range []int{1, 3} {
		log := chainLog(t, 10, lag)[3:] // seqs 1..3 deleted
		prev := ""
		for i := range log {
			c := *log[i].Chain
			c.N += 20
			c.Prev, c.Hash = prev, audit.Link(prev, c.N, c.Digest, c.Purged)
			log[i].Chain, prev = &c, c.Hash
		}
		// The first event left (4) witnesses 4-lag, before it.
		for name, opt := range map[string]audit.Options{"whole": {}, "export": {MidChain: true}} {
			t.Run(name, func(t *testing.T) { wantBreak(t, verify(t, log, opt), 4, "before the stream's first event") })
		}
	}
	// Honest: a stream whose first events were purged still begins at
	// the purged run, and its events witness positions inside it.
	purged := purge(t, chainLog(t, 10, 3), 1, 2, 3)
	if rep := verify(t, purged, audit.Options{}); rep.Break != nil {
		t.Fatalf("the beginning purged: %+v", rep)
	}
}
