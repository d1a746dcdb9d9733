package audit

import (
	"encoding/hex"
	"slices"
)

// ring is how many recent heads per stream the verifier keeps to check
// witnesses by: a witness further back is not checked.
const ring = 1 << 16

type streamState struct {
	// want is the earlier walk's head of the stream (Options.Heads), and
	// got the hash found at its position.
	want Witness
	got  string
	// key is the place in the walk's keys of the key the stream's newest
	// event is under (keyed: once one is), recorded is set once an
	// EndNotRecorded event was seen (ends.go), and noted is the position
	// of the newest such note: no record of the end may name an event
	// before it (ends.go, "Records put back").
	key      int
	keyed    bool
	recorded bool
	noted    int64
	// keyedCheckpoint is set once a checkpoint with its runs under the
	// key was seen: checkpoints of earlier versions, which have them only
	// in the unkeyed link, may come before it only.
	keyedCheckpoint bool

	started bool
	prev    string
	lastN   int64
	lastSeq int64
	firstN  int64
	// begins is the stream's first position, when the walk holds it from
	// its beginning (its first event, or a run purged from it, links to
	// nothing): no event witnesses a position before it.
	begins int64
	runs   []Run // sorted by From
	heads  map[int64]string
	order  []int64

	// starts are the positions at which a run starts, and entered the
	// steps into them the walk took (an event or a run there, linked to
	// the hash before it): a run entered as it says may be followed from
	// inside (bridges). Only run starts are kept, so the set stays as
	// small as the runs.
	starts  map[int64]bool
	entered map[step]bool

	// digests are the keyed digests met so far (their first half, which
	// is as unique as a digest needs to be here) and the position of
	// each. The digest covers an event and its witness, not its
	// position, so a copy of an earlier event with its unkeyed link
	// recomputed shows only as a digest met twice: two events of one
	// stream never share a digest, since each witnesses the chain as it
	// was (bolt: the event before it), unless a writer renders two events
	// alike in every field at the same instant on the same head.
	digests map[[16]byte]int64
}

// repeats reports the position of an earlier event of the stream with
// the digest d (hex, already checked against the key), or notes d at n.
func (st *streamState) repeats(d string, n int64) (int64, bool) {
	var k [16]byte
	if _, err := hex.Decode(k[:], []byte(d[:32])); err != nil {
		return 0, false // never: d is Digest's own hex
	}
	if at, ok := st.digests[k]; ok {
		return at, true
	}
	if st.digests == nil {
		st.digests = make(map[[16]byte]int64)
	}
	st.digests[k] = n
	return 0, false
}

// step is a link into position n of a stream from the hash prev.
type step struct {
	n    int64
	prev string
}

// enter records that the walk stepped into position n from prev, where
// a run may start.
func (st *streamState) enter(n int64, prev string) {
	if !st.starts[n] {
		return
	}
	if st.entered == nil {
		st.entered = make(map[step]bool)
	}
	st.entered[step{n, prev}] = true
}

// fromHead starts the stream at the earlier walk's head (Options.Heads),
// for a walk that may start mid-chain and whose first event of the
// stream comes after it: that event must continue from the head. A run
// purged since that covers the head counts as entered, so the chain goes
// on from it to the run's last: the runs are under the key, and cutShort
// takes a head a run covers as purged in the same way.
func (st *streamState) fromHead() {
	w := st.want
	st.see(w.N, w.Hash)
	st.firstN = w.N
	for _, r := range st.runs {
		if r.From <= w.N && w.N < r.To {
			if st.entered == nil {
				st.entered = make(map[step]bool)
			}
			st.entered[step{r.From, r.Prev}] = true
		}
	}
}

func (st *streamState) see(n int64, h string) {
	st.prev, st.lastN, st.started = h, n, true
	if n == st.want.N {
		st.got = h
	}
	if st.heads == nil {
		st.heads = make(map[int64]string)
	}
	st.heads[n] = h
	st.order = append(st.order, n)
	if len(st.order) > ring {
		delete(st.heads, st.order[0])
		st.order = st.order[1:]
	}
}

// bridges is the purged runs that carry the chain from where the stream
// stands to an event at position n that links to prev, in order, and
// whether they reach it. They are only worked out here, and followed by
// the caller only if they reach it: a stream not yet started in a walk
// that may start mid-chain must stay so when the run from the stream's
// beginning leads elsewhere (its first event comes after a later run),
// so that its first link is excused as any first link is.
//
// A run is followed from its start, when it starts after the stream's
// position, ends before n and links to the hash there; or from inside,
// when the walk entered it as it says (an event or run at its start
// linked to its prev) and it still covers the position: a started
// stream is followed link by link, so the events since its start are
// the run's own first ones, and the rest of it carries the chain on to
// its last. An export that ends inside a stretch a later purge dropped
// whole is bridged so. Without that entry nothing shows that the chain
// the walk followed is the run's, and the run is not followed.
func (st *streamState) bridges(n int64, prev string) ([]Run, bool) {
	at, last := st.lastN, st.prev
	var path []Run
	entered := func(r Run) bool {
		if st.entered[step{r.From, r.Prev}] {
			return true
		}
		for _, p := range path {
			if p.From == r.From && p.Prev == r.Prev {
				return true
			}
		}
		return false
	}
	// A run linked to the hash is preferred to one entered earlier, so
	// that a walk bridged from runs' starts alone is bridged as before.
	fromStart := func(r Run) bool { return r.From > at && r.To < n && r.Prev == last }
	fromInside := func(r Run) bool { return r.From <= at && at < r.To && r.To < n && entered(r) }
	for last != prev {
		i := slices.IndexFunc(st.runs, fromStart)
		if i < 0 {
			i = slices.IndexFunc(st.runs, fromInside)
		}
		if i < 0 {
			return nil, false
		}
		r := st.runs[i]
		path = append(path, r)
		at, last = r.To, r.Last // at grows: each run ends after it
	}
	return path, true
}

func (st *streamState) inRun(n int64) bool {
	for _, r := range st.runs {
		if r.From <= n && n <= r.To {
			return true
		}
	}
	return false
}
