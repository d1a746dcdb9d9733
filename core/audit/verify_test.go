package audit_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

var (
	key = audit.Key("test audit key")
	t0  = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
)

// chainLog appends n events to a fresh stream the way a store does:
// each links to the one before, and witnesses the head lag events back
// (lag 1 is the embedded store, where the witness is the previous event;
// more is a Redis replica that has not seen the newest appends).
func chainLog(t testing.TB, n, lag int) []core.Event {
	t.Helper()
	var log []core.Event
	for i := 1; i <= n; i++ {
		e := core.Event{Seq: int64(i), QuestionID: core.QuestionID("q" + string(rune('a'+i%26))), At: t0.Add(time.Duration(i) * time.Second),
			Kind: core.EventAnswered, Actor: "p-1", Payload: json.RawMessage(`{"n":` + string(rune('0'+i%10)) + `}`)}
		log = append(log, appendTo(t, log, e, lag, ""))
	}
	return log
}

// appendTo chains e after log, witnessing the event lag back.
func appendTo(t testing.TB, log []core.Event, e core.Event, lag int, purged string) core.Event {
	t.Helper()
	var prev, w audit.Witness
	if len(log) > 0 {
		last := log[len(log)-1].Chain
		prev = audit.Witness{N: last.N, Hash: last.Hash}
	}
	if len(log) >= lag && lag > 0 {
		c := log[len(log)-lag].Chain
		w = audit.Witness{N: c.N, Hash: c.Hash}
	}
	d, err := key.Digest(e, 0, w)
	if err != nil {
		t.Fatal(err)
	}
	e.Chain = &core.Chain{N: e.Seq, Prev: prev.Hash, Witness: w.String(), Digest: d, Hash: audit.Link(prev.Hash, e.Seq, d, purged), Purged: purged}
	return e
}

func walkOf(evs []core.Event) audit.Walk {
	return func(yield func(core.Event) error) error {
		for _, e := range evs {
			if err := yield(e); err != nil {
				return err
			}
		}
		return nil
	}
}

func verify(t *testing.T, evs []core.Event, opt audit.Options) audit.Report {
	t.Helper()
	rep, err := audit.Verify(key, walkOf(evs), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantBreak(t *testing.T, rep audit.Report, seq int64, reason string) {
	t.Helper()
	if rep.Break == nil {
		t.Fatalf("no break found; want one at seq %d", seq)
	}
	if rep.Break.Seq != seq || !strings.Contains(rep.Break.Reason, reason) {
		t.Fatalf("break at seq %d (%s); want seq %d, %q", rep.Break.Seq, rep.Break.Reason, seq, reason)
	}
}

func TestCleanChainVerifies(t *testing.T) {
	for _, lag := range []int{1, 3} {
		rep := verify(t, chainLog(t, 10, lag), audit.Options{})
		if rep.Break != nil || rep.Events != 10 || rep.Streams != 1 {
			t.Fatalf("lag %d: %+v", lag, rep)
		}
		if want := 10 - lag; rep.Witnessed != want {
			t.Fatalf("lag %d: %d witnesses checked, want %d", lag, rep.Witnessed, want)
		}
	}
}

func TestTamperingIsFound(t *testing.T) {
	for name, tc := range map[string]struct {
		edit   func([]core.Event) []core.Event
		seq    int64
		reason string
	}{
		"altered": {func(l []core.Event) []core.Event { l[4].Reason = "edited"; return l }, 5, "altered"},
		"altered payload": {func(l []core.Event) []core.Event {
			l[4].Payload = json.RawMessage(`{"n":9}`)
			return l
		}, 5, "altered"},
		"deleted": {func(l []core.Event) []core.Event { return append(l[:4:4], l[5:]...) }, 6, "does not link"},
		"moved": {func(l []core.Event) []core.Event {
			l[3], l[4] = l[4], l[3]
			l[3].Seq, l[4].Seq = 4, 5
			return l
		}, 4, "does not link"},
		"first deleted": {func(l []core.Event) []core.Event { return l[1:] }, 2, "first event links"},
		"inserted unchained": {func(l []core.Event) []core.Event {
			return append(l[:5:5], append([]core.Event{{Seq: 6, Kind: core.EventAnswered, At: t0}}, l[5:]...)...)
		}, 6, "not chained"},
		"chain field altered": {func(l []core.Event) []core.Event { l[2].Chain.Hash = strings.Repeat("0", 40); return l }, 3, "hash does not match"},
	} {
		t.Run(name, func(t *testing.T) {
			log := tc.edit(chainLog(t, 10, 1))
			wantBreak(t, verify(t, log, audit.Options{}), tc.seq, tc.reason)
		})
	}
}

// TestRewrittenLinksAreCaughtByAWitness: someone who can write the store
// but has not the key deletes an event and recomputes every later link
// (the unkeyed part of the chain); the digests, which they cannot
// recompute, still witness the chain as it was.
func TestRewrittenLinksAreCaughtByAWitness(t *testing.T) {
	log := chainLog(t, 10, 3)
	log = append(log[:4:4], log[5:]...) // seq 5 deleted
	prev := log[3].Chain.Hash
	for i := 4; i < len(log); i++ {
		c := *log[i].Chain
		c.Prev = prev
		c.Hash = audit.Link(prev, c.N, c.Digest, c.Purged)
		log[i].Chain, prev = &c, c.Hash
	}
	// Seq 6 witnesses seq 3 (before the deletion), seq 7 witnesses 4, and
	// seq 8 witnesses 5, which is gone: it names it missing.
	wantBreak(t, verify(t, log, audit.Options{}), 8, "missing")

	// Deleting 5 and 6 and rewriting: seq 9 witnesses 6.
	log = chainLog(t, 10, 3)
	log = append(log[:4:4], log[6:]...)
	prev = log[3].Chain.Hash
	for i := 4; i < len(log); i++ {
		c := *log[i].Chain
		c.Prev = prev
		c.Hash = audit.Link(prev, c.N, c.Digest, c.Purged)
		log[i].Chain, prev = &c, c.Hash
	}
	wantBreak(t, verify(t, log, audit.Options{}), 8, "missing")

	// Moving 7 before 6 and rewriting: 8 witnesses 5, whose hash is
	// intact, and 9 witnesses 6, whose link changed.
	log = chainLog(t, 10, 3)
	log[5], log[6] = log[6], log[5]
	log[5].Chain.N, log[6].Chain.N = 6, 7 // an attacker renumbers too
	prev = log[4].Chain.Hash
	for i := 5; i < len(log); i++ {
		c := *log[i].Chain
		c.Prev = prev
		c.Hash = audit.Link(prev, c.N, c.Digest, c.Purged)
		log[i].Chain, prev = &c, c.Hash
	}
	rep := verify(t, log, audit.Options{})
	if rep.Break == nil {
		t.Fatal("a reordering with rewritten links went unnoticed")
	}
}

// purge drops the events at the given seqs from log and appends a
// checkpoint with their runs, as the stores do.
func purge(t testing.TB, log []core.Event, seqs ...int64) []core.Event {
	t.Helper()
	drop := map[int64]bool{}
	for _, s := range seqs {
		drop[s] = true
	}
	var parts []audit.Run
	var kept []core.Event
	for _, e := range log {
		if !drop[e.Seq] {
			kept = append(kept, e)
			continue
		}
		if e.Chain.Purged != "" {
			carried, err := audit.ParseRuns(e.Chain.Purged)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, carried...)
		}
		parts = append(parts, audit.Run{From: e.Chain.N, To: e.Chain.N, Prev: e.Chain.Prev, Last: e.Chain.Hash})
	}
	runs := audit.EncodeRuns(audit.Runs(parts))
	cp := audit.Checkpoint(t0, t0.Add(time.Hour), runs)
	cp.Seq = log[len(log)-1].Seq + 1
	return append(kept, appendTo(t, log, cp, 1, runs))
}

func TestPurgedChainVerifies(t *testing.T) {
	log := purge(t, chainLog(t, 10, 1), 1, 2, 5, 6, 9)
	rep := verify(t, log, audit.Options{})
	if rep.Break != nil || rep.Checkpoints != 1 || rep.Events != 6 {
		t.Fatalf("after a purge: %+v", rep)
	}
	if cp := log[len(log)-1].Chain.Purged; strings.Count(cp, " ") != 2 {
		t.Fatalf("runs %q: want three (1-2, 5-6, 9)", cp)
	}
	// A second purge takes the first checkpoint with it, and its runs.
	log = purge(t, log, 3, 11)
	if rep := verify(t, log, audit.Options{}); rep.Break != nil || rep.Checkpoints != 1 {
		t.Fatalf("after a second purge: %+v", rep)
	}
	// Everything purged but the last checkpoint.
	var all []int64
	for _, e := range log {
		all = append(all, e.Seq)
	}
	log = purge(t, log, all...)
	if rep := verify(t, log, audit.Options{}); rep.Break != nil || rep.Events != 1 {
		t.Fatalf("after purging all: %+v", rep)
	}

	// A deletion beside a purged stretch is still found.
	log = purge(t, chainLog(t, 10, 1), 5, 6)
	log = append(log[:3:3], log[4:]...) // seq 4, just before the purged 5-6
	wantBreak(t, verify(t, log, audit.Options{}), 7, "does not link")
}

func TestContinuedExport(t *testing.T) {
	log := chainLog(t, 10, 1)
	if rep := verify(t, log[6:], audit.Options{}); rep.Break == nil {
		t.Fatal("a log missing its beginning verified as whole")
	}
	rep := verify(t, log[6:], audit.Options{MidChain: true})
	if rep.Break != nil || len(rep.MidChain) != 1 || rep.MidChain[0] != 7 {
		t.Fatalf("continued export: %+v", rep)
	}
	// The two parts verify as one, and the second links to the first.
	if rep := verify(t, append(log[:6:6], log[6:]...), audit.Options{}); rep.Break != nil {
		t.Fatalf("both parts: %+v", rep)
	}
	if log[6].Chain.Prev != log[5].Chain.Hash {
		t.Fatal("the continuation does not link to the end of the first part")
	}

	// A purge between two exports drops events the first holds and some
	// the second would have: the second's checkpoint bridges the gap,
	// and the first's copies of purged events still verify as they are.
	purged := purge(t, log, 2, 3, 7, 8)
	first, second := log[:6], purged[4:] // second: seqs 9, 10 and the checkpoint
	if second[0].Seq != 9 {
		t.Fatalf("second export starts at %d", second[0].Seq)
	}
	if rep := verify(t, append(append([]core.Event(nil), first...), second...), audit.Options{}); rep.Break != nil {
		t.Fatalf("exports across a purge: %+v", rep)
	}
	if rep := verify(t, second, audit.Options{MidChain: true}); rep.Break != nil {
		t.Fatalf("the later export alone: %+v", rep)
	}
}

// TestContinuedExportAfterItsBeginningIsPurged: once a purge has dropped
// a stream's first events, a later export checked on its own (MidChain)
// still verifies, its first link unchecked. Before, the run that starts
// the stream (prev "") was followed from the walk's empty start although
// the export does not begin there, the stream then counted as started,
// and its first event was named as not linking to the event before it.
// Deletions inside the export, and before a stream that must start at
// its beginning, are still found.
func TestContinuedExportAfterItsBeginningIsPurged(t *testing.T) {
	log := chainLog(t, 10, 1)
	purged := purge(t, log, 1, 2, 3, 7, 8) // runs 1:3 (the stream's beginning) and 7:8
	if rep := verify(t, purged, audit.Options{}); rep.Break != nil {
		t.Fatalf("the purged log: %+v", rep)
	}
	second := purged[3:] // seqs 9, 10 and the checkpoint
	if second[0].Seq != 9 {
		t.Fatalf("second export starts at %d", second[0].Seq)
	}
	rep := verify(t, second, audit.Options{MidChain: true})
	if rep.Break != nil || len(rep.MidChain) != 1 || rep.MidChain[0] != 9 {
		t.Fatalf("the later export alone: %+v", rep)
	}
	// From seq 4 on, the export links to the stream's beginning through
	// the run 1:3, so nothing is left unchecked.
	if rep := verify(t, purged, audit.Options{MidChain: true}); rep.Break != nil || len(rep.MidChain) != 0 {
		t.Fatalf("the purged log as an export: %+v", rep)
	}

	// Seq 10 deleted from the later export: the checkpoint does not link.
	wantBreak(t, verify(t, []core.Event{second[0], second[2]}, audit.Options{MidChain: true}), 11, "does not link")
	// Seq 5 deleted after the bridged beginning.
	wantBreak(t, verify(t, append(purged[:1:1], purged[2:]...), audit.Options{MidChain: true}), 6, "does not link")
	// A walk that must start at the beginning still may not start at 9.
	wantBreak(t, verify(t, second, audit.Options{}), 9, "first event links")
}

// TestPurgeAcrossTwoExportsIsBridged: a purge that drops a stretch
// spanning the end of one export and the start of the next (log-1 ends
// at 6, then 5..8 go, merged into one run 5:8) is bridged from inside the
// run, since log-1 holds its first events linked as the run says. Before,
// a run was followed only from its start, and the walk broke at 9.
// A deletion on either side is still found.
func TestPurgeAcrossTwoExportsIsBridged(t *testing.T) {
	log := chainLog(t, 10, 1)
	purged := purge(t, log, 5, 6, 7, 8)
	if runs := mustRuns(t, purged[len(purged)-1].Chain.Purged); len(runs) != 1 || runs[0].From != 5 || runs[0].To != 8 {
		t.Fatalf("runs %+v; want one, 5:8", runs)
	}
	second := purged[4:] // seqs 9, 10 and the checkpoint
	if second[0].Seq != 9 {
		t.Fatalf("second export starts at %d", second[0].Seq)
	}
	both := func(first []core.Event, second ...core.Event) []core.Event {
		return append(append([]core.Event(nil), first...), second...)
	}
	for _, end := range []int{5, 6} { // log-1 ends at the run's first event, or inside it
		if rep := verify(t, both(log[:end], second...), audit.Options{}); rep.Break != nil {
			t.Fatalf("log-1 ending at %d, then log-2: %+v", end, rep)
		}
		if rep := verify(t, both(log[:end], second...), audit.Options{MidChain: true}); rep.Break != nil || len(rep.MidChain) != 0 {
			t.Fatalf("log-1 ending at %d, then log-2, as exports: %+v", end, rep)
		}
	}

	// Seq 9 deleted from log-2: 10 does not link to the run's end.
	wantBreak(t, verify(t, both(log[:6], second[1:]...), audit.Options{}), 10, "does not link")
	// Seq 5 deleted from log-1: 6 does not link to 4, and the run does
	// not start after 4 and end before 6.
	wantBreak(t, verify(t, both(log[:4], append(log[5:6:6], second...)...), audit.Options{}), 6, "does not link")
}

func TestWrongKeyIsABreak(t *testing.T) {
	rep, err := audit.Verify(audit.Key("another key"), walkOf(chainLog(t, 3, 1)), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantBreak(t, rep, 1, "digest does not match")
}

func TestKeyIsRedacted(t *testing.T) {
	b, _ := json.Marshal(struct{ K audit.Key }{key})
	if strings.Contains(string(b), "test audit key") || key.String() != "REDACTED" {
		t.Fatalf("the key shows: %s %s", b, key)
	}
}

// TestEarlierHeadsFindACutEnd: given the heads an earlier walk reported,
// a walk finds a stream cut off at its end (or deleted whole), which no
// link inside the chain shows, and a chain rewritten from the start;
// events added since, or a purge of the earlier head, are no break.
func TestEarlierHeadsFindACutEnd(t *testing.T) {
	log := chainLog(t, 10, 1)
	heads := verify(t, log, audit.Options{}).Heads
	if heads[0] != "10:"+log[9].Chain.Hash {
		t.Fatalf("heads %v; want stream 0 at 10", heads)
	}
	with := audit.Options{Heads: heads}
	if rep := verify(t, log, with); rep.Break != nil {
		t.Fatalf("the same log: %+v", rep.Break)
	}
	grown := append(append([]core.Event(nil), log...), appendTo(t, log, core.Event{Seq: 11, Kind: core.EventAnswered, At: t0}, 1, ""))
	if rep := verify(t, grown, with); rep.Break != nil {
		t.Fatalf("the log grown since: %+v", rep.Break)
	}
	if rep := verify(t, purge(t, grown, 9, 10), with); rep.Break != nil {
		t.Fatalf("the earlier head purged since: %+v", rep.Break)
	}
	wantBreak(t, verify(t, log[:8], with), 8, "cut off its end")
	wantBreak(t, verify(t, nil, with), 0, "cut off its end")
	wantBreak(t, verify(t, chainLog(t, 10, 3), with), 10, "rewritten")
	if rep := verify(t, log[6:], audit.Options{MidChain: true, Heads: map[int]string{0: "6:" + log[5].Chain.Hash}}); rep.Break != nil {
		t.Fatalf("a continued export after the earlier head: %+v", rep.Break)
	}
	if _, err := audit.Verify(key, walkOf(log), audit.Options{Heads: map[int]string{0: log[9].Chain.Hash}}); err == nil {
		t.Fatal("a head without its position was taken")
	}
}

// TestEarlierHeadsHoldForExports: checking exports (MidChain) against an
// earlier walk's heads, a stream named in them must still hold its head,
// or continue from it: its first event after the head links to it (or
// through purged runs from it). Before, a walk that may start mid-chain
// excused a head it did not reach, so a stream wiped and begun again, or
// no events at all, verified.
func TestEarlierHeadsHoldForExports(t *testing.T) {
	log := chainLog(t, 10, 1)
	head := map[int]string{0: "10:" + log[9].Chain.Hash}
	exports := audit.Options{MidChain: true, Heads: head}

	// No events at all.
	wantBreak(t, verify(t, nil, exports), 0, "cut off its end")
	// Every event deleted, and the store chains its new events from the
	// stream's beginning again, at 11 on.
	var wiped []core.Event
	for seq := int64(11); seq <= 13; seq++ {
		wiped = append(wiped, appendTo(t, wiped, core.Event{Seq: seq, Kind: core.EventAnswered, At: t0}, 1, ""))
	}
	wantBreak(t, verify(t, wiped, exports), 11, "does not link to the head")
	wantBreak(t, verify(t, wiped, audit.Options{Heads: head}), 13, "missing")
	// A prefix deleted: what is left starts before the head, and ends
	// before it too.
	wantBreak(t, verify(t, log[3:8], exports), 8, "cut off its end")
	// A continuation that does not start from the head: events 11 and 12
	// after it are gone.
	grown := log
	for seq := int64(11); seq <= 15; seq++ {
		grown = append(grown[:len(grown):len(grown)], appendTo(t, grown, core.Event{Seq: seq, Kind: core.EventAnswered, At: t0}, 1, ""))
	}
	wantBreak(t, verify(t, grown[12:], exports), 13, "does not link to the head")

	// Honest: the export holding the head, a continuation from it (whose
	// witness of the head is checked), and continuations after a purge
	// that dropped events after the head, or the head with them.
	if rep := verify(t, grown, exports); rep.Break != nil {
		t.Fatalf("the whole log: %+v", rep)
	}
	rep := verify(t, grown[10:], exports)
	if rep.Break != nil || len(rep.MidChain) != 0 || rep.Witnessed != 5 {
		t.Fatalf("the continuation from the head: %+v", rep)
	}
	for _, seqs := range [][]int64{{11, 12}, {9, 10, 11, 12}} {
		purged := purge(t, grown, seqs...)
		cont := purged[len(purged)-4:] // seqs 13, 14, 15 and the checkpoint
		if cont[0].Seq != 13 {
			t.Fatalf("the continuation starts at %d", cont[0].Seq)
		}
		if rep := verify(t, cont, exports); rep.Break != nil || len(rep.MidChain) != 0 {
			t.Fatalf("the continuation after a purge of %v: %+v", seqs, rep)
		}
		wantBreak(t, verify(t, cont[1:], exports), 14, "does not link to the head")
	}
}

// TestForgedRunsAreABreak: someone who can write the store but has not
// the key deletes an event and adds its run to the newest checkpoint's
// purged runs (relinking it), so that the verifier would bridge the gap;
// the runs are under the checkpoint's keyed digest, so the checkpoint's
// runs are not followed at all, and the walk breaks at the first gap.
// Before, the runs were covered by the unkeyed link alone, and the
// forgery verified.
func TestForgedRunsAreABreak(t *testing.T) {
	log := purge(t, chainLog(t, 10, 1), 2, 3) // seqs 1, 4..10, the checkpoint at 11
	cp := log[len(log)-1]
	del := log[4] // seq 7
	forged := audit.EncodeRuns(audit.Runs(append(mustRuns(t, cp.Chain.Purged),
		audit.Run{From: del.Chain.N, To: del.Chain.N, Prev: del.Chain.Prev, Last: del.Chain.Hash})))
	c := *cp.Chain
	c.Purged, c.Hash = forged, audit.Link(c.Prev, c.N, c.Digest, forged)
	cp.Chain = &c
	tampered := append(append(append([]core.Event(nil), log[:4]...), log[5:len(log)-1]...), cp)
	wantBreak(t, verify(t, tampered, audit.Options{}), 4, "does not link")

	// A continued export that starts after the purged stretch: the
	// checkpoint's own check names the forgery.
	log[len(log)-1] = cp
	wantBreak(t, verify(t, log[2:], audit.Options{MidChain: true}), cp.Seq, "not the ones it was written with")
}

// TestEarlierCheckpointsStillVerify: a checkpoint of an earlier version,
// with its runs in the link alone, still verifies before the first whose
// runs are keyed; a copy of one after it is a break.
func TestEarlierCheckpointsStillVerify(t *testing.T) {
	log := chainLog(t, 10, 1)
	legacy := func(log []core.Event, seqs ...int64) []core.Event {
		withKeyed := purge(t, log, seqs...)
		cp := withKeyed[len(withKeyed)-1]
		old := core.Event{Seq: cp.Seq, At: cp.At, Kind: core.EventCheckpoint, Reason: "retention", Payload: json.RawMessage(`{"cutoff":"2026-03-01T09:00:00Z"}`)}
		return append(withKeyed[:len(withKeyed)-1], appendTo(t, log, old, 1, cp.Chain.Purged))
	}
	earlier := legacy(log, 2, 3)
	if rep := verify(t, earlier, audit.Options{}); rep.Break != nil || rep.Checkpoints != 1 {
		t.Fatalf("a log purged by an earlier version: %+v", rep)
	}
	mixed := purge(t, earlier, 5) // then a purge of this version
	if rep := verify(t, mixed, audit.Options{}); rep.Break != nil || rep.Checkpoints != 2 {
		t.Fatalf("an earlier checkpoint, then one of this version: %+v", rep)
	}
	copied := legacy(mixed, 7)
	wantBreak(t, verify(t, copied, audit.Options{}), copied[len(copied)-1].Seq, "comes after one whose are")
}

func mustRuns(t *testing.T, s string) []audit.Run {
	t.Helper()
	runs, err := audit.ParseRuns(s)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
