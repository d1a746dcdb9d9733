package audit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

var oldKey = audit.Key("the audit key before")

// appendUnder chains e after log under k, as the embedded store does
// (the witness is the event before).
func appendUnder(t testing.TB, k audit.Key, log []core.Event, e core.Event) []core.Event {
	t.Helper()
	var head audit.Witness
	if len(log) > 0 {
		c := log[len(log)-1].Chain
		head = audit.Witness{N: c.N, Hash: c.Hash}
	}
	e.Seq = head.N + 1
	c, err := k.Chain(e, 0, e.Seq, head, "")
	if err != nil {
		t.Fatal(err)
	}
	e.Chain = c
	return append(log, e)
}

// logUnder appends n events under k.
func logUnder(t testing.TB, k audit.Key, log []core.Event, n int) []core.Event {
	t.Helper()
	for range n {
		log = appendUnder(t, k, log, core.Event{QuestionID: "q1", At: t0.Add(time.Duration(len(log)) * time.Second), Kind: core.EventNotified})
	}
	return log
}

func endOf(log []core.Event) audit.Witness {
	c := log[len(log)-1].Chain
	return audit.Witness{N: c.N, Hash: c.Hash}
}

// TestKeyChangeVerifiesWithTheEarlierKeys: a log chained under one key
// and then another verifies given both, oldest first, and says where each
// begins; without the earlier key its first event breaks, saying so; an
// event under the earlier key after one under the later breaks.
func TestKeyChangeVerifiesWithTheEarlierKeys(t *testing.T) {
	log := logUnder(t, key, logUnder(t, oldKey, nil, 4), 3)
	rep := verify(t, log, audit.Options{})
	wantBreak(t, rep, 1, "under an audit key not given")
	if !rep.Break.KeyMismatch {
		t.Fatalf("the break does not say no key matched: %+v", rep.Break)
	}
	rep = verify(t, log, audit.Options{OldKeys: []audit.Key{audit.Key("unused"), oldKey}})
	if rep.Break != nil || rep.Events != 7 || rep.Witnessed != 6 {
		t.Fatalf("with the earlier keys: %+v", rep)
	}
	want := []audit.KeyChange{{Stream: 0, Seq: 1, Key: 1}, {Stream: 0, Seq: 5, Key: 2}}
	if len(rep.Keys) != len(want) || rep.Keys[0] != want[0] || rep.Keys[1] != want[1] {
		t.Fatalf("keys %+v; want %+v", rep.Keys, want)
	}
	// Back to the earlier key: someone holding it forges an event after
	// the change, or a process was still on it.
	back := logUnder(t, oldKey, log, 1)
	wantBreak(t, verify(t, back, audit.Options{OldKeys: []audit.Key{oldKey}}), 8, "earlier audit key")
	// The keys given the other way round do not take the log either.
	if rep := verify(t, log, audit.Options{OldKeys: []audit.Key{key}}); rep.Break == nil {
		t.Fatal("the log verified with its keys given newest first")
	}
	if rep, err := audit.Verify(oldKey, walkOf(log), audit.Options{OldKeys: []audit.Key{key}}); err != nil || rep.Break == nil || rep.Break.Seq != 5 {
		t.Fatalf("the keys swapped: %+v, %v; want a break at seq 5", rep, err)
	}
}

// TestEndsFindACutEnd: a walk of a store given the store's keyed record
// of where its chain ends finds events cut off the end, which no link
// shows; a store keeping no record breaks unless the operator says an
// earlier version wrote it (AllowUnchained).
func TestEndsFindACutEnd(t *testing.T) {
	log := logUnder(t, key, nil, 6)
	ends := map[int]string{0: key.EndRecord(0, endOf(log))}
	if rep := verify(t, log, audit.Options{Ends: ends}); rep.Break != nil {
		t.Fatalf("the whole log: %+v", rep)
	}
	wantBreak(t, verify(t, log[:4], audit.Options{Ends: ends}), 4, "cut off its end")
	if rep := verify(t, nil, audit.Options{Ends: ends}); rep.Break == nil || !strings.Contains(rep.Break.Reason, "no event of it is left") {
		t.Fatalf("every event gone: %+v", rep)
	}
	// A record someone without the key made for the cut end.
	forged := map[int]string{0: audit.Key("a guess").EndRecord(0, endOf(log[:4]))}
	wantBreak(t, verify(t, log[:4], audit.Options{Ends: forged}), 4, "cut off its end")
	// A record of an event still in the chain: an earlier version wrote
	// the events after it without keeping the record; nothing was cut.
	earlier := map[int]string{0: key.EndRecord(0, endOf(log[:3]))}
	if rep := verify(t, log, audit.Options{Ends: earlier}); rep.Break != nil {
		t.Fatalf("a record of an event still in the chain: %+v", rep)
	}
	// No record: an earlier version, or deleted.
	rep := verify(t, log, audit.Options{Ends: map[int]string{}})
	wantBreak(t, rep, 6, "no keyed record")
	if !rep.Break.Unrecorded {
		t.Fatalf("the break does not say the end was not recorded: %+v", rep.Break)
	}
	rep = verify(t, log, audit.Options{Ends: map[int]string{}, AllowUnchained: true})
	if rep.Break != nil || len(rep.Unrecorded) != 1 || rep.Unrecorded[0] != 6 {
		t.Fatalf("no record, allowed: %+v", rep)
	}
	// A record under the earlier key is not taken for a log whose end is
	// under the later one.
	moved := logUnder(t, key, logUnder(t, oldKey, nil, 3), 2)
	stale := map[int]string{0: oldKey.EndRecord(0, endOf(moved))}
	wantBreak(t, verify(t, moved, audit.Options{OldKeys: []audit.Key{oldKey}, Ends: stale}), 5, "not where the store's keyed record")
}

// TestEndNotRecordedEvents: the event a writer appends when it found the
// store's record of the chain's end not under its key is checked: a
// record under an earlier key of that end (the key was changed) holds;
// one of another end (events were cut off while it was stopped), one
// that is no record, or none (unless allowed, and then once) breaks.
func TestEndNotRecordedEvents(t *testing.T) {
	base := logUnder(t, oldKey, nil, 4)
	resumed := func(from []core.Event, found string) []core.Event {
		log := append([]core.Event(nil), from...)
		log = appendUnder(t, key, log, audit.EndNotRecorded(found, t0.Add(time.Hour)))
		return logUnder(t, key, log, 2)
	}
	both := audit.Options{OldKeys: []audit.Key{oldKey}}

	changed := resumed(base, oldKey.EndRecord(0, endOf(base)))
	rep := verify(t, changed, both)
	if rep.Break != nil || rep.Events != 7 || rep.Checkpoints != 0 {
		t.Fatalf("the key changed: %+v", rep)
	}
	if len(rep.Keys) != 2 || rep.Keys[1].Seq != 5 {
		t.Fatalf("keys %+v; want the change at seq 5", rep.Keys)
	}
	// Events 4 cut off while it was stopped: the record found names 4.
	wantBreak(t, verify(t, resumed(base[:3], oldKey.EndRecord(0, endOf(base))), both), 4, "named another end")
	wantBreak(t, verify(t, resumed(base, "not a record"), both), 5, "named another end")
	wantBreak(t, verify(t, resumed(base, key.EndRecord(0, audit.Witness{N: 9, Hash: endOf(base).Hash})), both), 5, "named another end")

	// A record of an event still in the chain: an earlier version wrote
	// the events after it (askbridge rolled back, then forward), and
	// nothing was cut.
	if rep := verify(t, resumed(base, oldKey.EndRecord(0, endOf(base[:2]))), both); rep.Break != nil {
		t.Fatalf("a record of an event still in the chain: %+v", rep)
	}

	// An export that starts after the head the event witnesses cannot
	// check the record against it, and does not break for that.
	cut := resumed(base[:3], oldKey.EndRecord(0, endOf(base)))
	if rep := verify(t, cut[3:], audit.Options{OldKeys: []audit.Key{oldKey}, MidChain: true}); rep.Break != nil {
		t.Fatalf("an export from the event on: %+v", rep)
	}

	none := resumed(base, "")
	rep = verify(t, none, both)
	wantBreak(t, rep, 5, "no keyed record")
	if !rep.Break.Unrecorded {
		t.Fatalf("the break does not say the end was not recorded: %+v", rep.Break)
	}
	allowed := both
	allowed.AllowUnchained = true
	rep = verify(t, none, allowed)
	if rep.Break != nil || len(rep.Unrecorded) != 1 || rep.Unrecorded[0] != 4 {
		t.Fatalf("none found, allowed: %+v", rep)
	}
	// Once a record was kept, none found later is a break, allowed or not.
	again := logUnder(t, key, appendUnder(t, key, none, audit.EndNotRecorded("", t0.Add(2*time.Hour))), 1)
	wantBreak(t, verify(t, again, allowed), 8, "though it had kept one")
}

// TestNoRecordBeforeANoteIsTaken: once a writer has noted the chain's
// end on opening the store (EndNotRecorded), it records every end it
// writes, so no honest record of the end names an event before that
// note. The note itself holds the record it found, readable by anyone
// who reads the log: someone who can write the store but has not the
// key cuts events off the end and puts that record back. Before, a
// record of any earlier event still in the chain was taken, so the cut
// verified, whether the store was checked as it was left or after
// askbridge reopened it (its new note naming the record put back).
func TestNoRecordBeforeANoteIsTaken(t *testing.T) {
	both := audit.Options{OldKeys: []audit.Key{oldKey}}
	// The key changed: the note at 5 holds the old key's record of 4.
	base := logUnder(t, oldKey, nil, 4)
	published := oldKey.EndRecord(0, endOf(base))
	log := logUnder(t, key, appendUnder(t, key, base, audit.EndNotRecorded(published, t0.Add(time.Hour))), 4) // 6..9
	// 8 and 9 cut while askbridge was stopped, the published record put
	// back; askbridge reopens the store and notes it at 8.
	reopened := logUnder(t, key, appendUnder(t, key, log[:7:7], audit.EndNotRecorded(published, t0.Add(2*time.Hour))), 1)
	wantBreak(t, verify(t, reopened, both), 8, "before the note at position 5")

	// An earlier version wrote 6 and 7 without recording them: the note
	// at 8 holds the record of 5. 11 and 12 cut, that record put back,
	// checked as it was left.
	down := logUnder(t, key, nil, 7)
	atFive := key.EndRecord(0, endOf(down[:5]))
	down = logUnder(t, key, appendUnder(t, key, down, audit.EndNotRecorded(atFive, t0.Add(time.Hour))), 4) // 9..12
	wantBreak(t, verify(t, down[:10], audit.Options{Ends: map[int]string{0: atFive}}), 10, "before the note at position 8")

	// Honest: the record of the newest event, and of an event after the
	// note that an earlier version wrote on from (13 and 14 unrecorded).
	if rep := verify(t, down, audit.Options{Ends: map[int]string{0: key.EndRecord(0, endOf(down))}}); rep.Break != nil {
		t.Fatalf("the whole log: %+v", rep)
	}
	on := logUnder(t, key, down, 2)
	if rep := verify(t, on, audit.Options{Ends: map[int]string{0: key.EndRecord(0, endOf(down))}}); rep.Break != nil {
		t.Fatalf("an earlier version wrote on after the note: %+v", rep)
	}
	// And back on this version: its note names the record of 12.
	back := logUnder(t, key, appendUnder(t, key, on, audit.EndNotRecorded(key.EndRecord(0, endOf(down)), t0.Add(3*time.Hour))), 1)
	if rep := verify(t, back, audit.Options{Ends: map[int]string{0: key.EndRecord(0, endOf(back))}}); rep.Break != nil {
		t.Fatalf("back on this version after the note: %+v", rep)
	}
}
