package audit

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/askbridge/askbridge/core"
)

// Walk hands every event of a log to yield, in Seq order, and stops at
// the first error yield returns. Verify walks twice.
type Walk func(yield func(core.Event) error) error

// Break is the first broken link a walk found.
type Break struct {
	Seq    int64  `json:"seq"`
	Stream int    `json:"stream"`
	Reason string `json:"reason"`
	// Unchained is set when the event has no chain at all, so that a
	// caller can say how to check a log begun before the chain
	// (Options.AllowUnchained) without reading the reason.
	Unchained bool `json:"unchained,omitempty"`
}

func (b *Break) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d (stream %d): %s", b.Seq, b.Stream, b.Reason)
}

// Report is what a walk found.
type Report struct {
	Events int `json:"events"`
	// Unchained events were written before the chain began (a log kept
	// by an earlier version); they come before every chained one, and are
	// taken only with Options.AllowUnchained.
	Unchained int `json:"unchained"`
	// Witnessed counts the events whose witness was checked against the
	// chain; the others' witnesses lie before the walk, inside a purged
	// run or further back than the verifier keeps.
	Witnessed   int `json:"witnessed"`
	Checkpoints int `json:"checkpoints"`
	Streams     int `json:"streams"`
	// MidChain lists the seq of each stream's first event when a walk
	// that may start mid-chain did (an export continued from since): the
	// link to the event before it was not checked.
	MidChain []int64 `json:"mid_chain,omitempty"`
	// Heads is each stream's last event, as "<n>:<hash>" (Witness's
	// form), for a later walk to be given (Options.Heads).
	Heads map[int]string `json:"heads,omitempty"`
	Break *Break         `json:"break,omitempty"`
}

// Options shape a walk.
type Options struct {
	// MidChain lets each stream start after its first event (an export
	// taken with since): its first link is not checked. Without it a
	// stream must start at its beginning (or at a purged run that does).
	MidChain bool
	// Heads are an earlier walk's Report.Heads: each stream's last event
	// then. The chain must still hold each, unless a purge has dropped it
	// since; a stream that now ends before it, or lacks it, was cut
	// short or rewritten, which no link inside the chain can show. With
	// MidChain, a stream whose first event comes after its head must
	// continue from it instead: that event links to the head (or through
	// runs purged since), since a walk that may start anywhere would
	// otherwise take a stream deleted and begun again, or no events at
	// all, for one that started before the walk.
	Heads map[int]string
	// AllowUnchained says the log began before askbridge chained its
	// events: unchained events ahead of the first chained one are then
	// counted (Report.Unchained), not a break. It is the operator's word,
	// not the store's: a store chained since its creation never holds an
	// unchained event, and a marker kept in the store could be forged by
	// whoever strips the chains, so without it any unchained event is a
	// break (one forged into a seq a purge freed, or every chain stripped
	// and an event edited, would otherwise pass as not covered).
	AllowUnchained bool
}

// ring is how many recent heads per stream the verifier keeps to check
// witnesses by: a witness further back is not checked.
const ring = 1 << 16

type streamState struct {
	// want is the earlier walk's head of the stream (Options.Heads), and
	// got the hash found at its position.
	want Witness
	got  string
	// keyedCheckpoint is set once a checkpoint with its runs under the
	// key was seen: checkpoints of earlier versions, which have them only
	// in the unkeyed link, may come before it only.
	keyedCheckpoint bool

	started bool
	prev    string
	lastN   int64
	lastSeq int64
	firstN  int64
	runs    []Run // sorted by From
	heads   map[int64]string
	order   []int64

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

// Verify walks a log twice: once for the checkpoints' purged runs, then
// to check every link, and returns the first break in the Report (nil
// Break: the chain holds). The error is the walk's own.
func Verify(k Key, walk Walk, opt Options) (Report, error) {
	streams := map[int]*streamState{}
	state := func(s int) *streamState {
		st := streams[s]
		if st == nil {
			st = &streamState{}
			streams[s] = st
		}
		return st
	}
	for s, h := range opt.Heads {
		w, ok := ParseWitness(h)
		if !ok || w.Hash == "" || s < 0 {
			return Report{}, fmt.Errorf("audit: the earlier head of stream %d, %q, is not <n>:<hash>", s, h)
		}
		state(s).want = w
	}
	err := walk(func(e core.Event) error {
		if e.Kind != core.EventCheckpoint || e.Chain == nil {
			return nil
		}
		if keyed, ok := keyedRuns(e); ok && keyed != e.Chain.Purged {
			return nil // not the runs it was written with: its own check breaks
		}
		if runs, err := ParseRuns(e.Chain.Purged); err == nil { // a bad one fails its own link
			st := state(e.Chain.Stream)
			st.runs = append(st.runs, runs...)
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	for _, st := range streams {
		st.runs = Runs(st.runs)
		for _, r := range st.runs {
			if st.starts == nil {
				st.starts = make(map[int64]bool)
			}
			st.starts[r.From] = true
		}
	}
	var rep Report
	chained := false
	stop := errors.New("break")
	err = walk(func(e core.Event) error {
		rep.Events++
		if e.Chain == nil {
			switch {
			case chained:
				rep.Break = &Break{Seq: e.Seq, Unchained: true, Reason: "not chained, though it comes after chained events: inserted, or its chain stripped"}
				return stop
			case !opt.AllowUnchained:
				rep.Break = &Break{Seq: e.Seq, Unchained: true, Reason: "not chained, and the log is not said to have begun before the chain: inserted, or its chain stripped (a log an earlier version began holds such events first)"}
				return stop
			}
			rep.Unchained++
			return nil
		}
		chained = true
		if e.Kind == core.EventCheckpoint {
			rep.Checkpoints++
		}
		if b := check(k, state(e.Chain.Stream), e, opt, &rep); b != nil {
			rep.Break = b
			return stop
		}
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return Report{}, err
	}
	if rep.Break == nil {
		rep.Break = cutShort(streams)
	}
	rep.Heads = map[int]string{}
	for s, st := range streams {
		if st.started {
			rep.Streams++
			rep.Heads[s] = Witness{N: st.lastN, Hash: st.prev}.String()
		}
	}
	slices.Sort(rep.MidChain)
	return rep, nil
}

// cutShort is the first stream, by number, that no longer holds the head
// an earlier walk found (Options.Heads), or nil. A walk that may start
// mid-chain gets no excuse here: a stream of it whose first event comes
// after the head was started from the head (check), and a stream with
// no events in the walk shows no head at all. Excusing those let a
// stream deleted and begun again, or an empty export, verify.
func cutShort(streams map[int]*streamState) *Break {
	for _, s := range slices.Sorted(maps.Keys(streams)) {
		st := streams[s]
		w := st.want
		broke := func(reason string) *Break {
			return &Break{Seq: st.lastSeq, Stream: s, Reason: reason}
		}
		switch {
		case w.Hash == "" || st.got == w.Hash || st.inRun(w.N):
			// none given, still there (or continued from), or purged since
		case st.got != "":
			return broke(fmt.Sprintf("position %d is not the event an earlier check found there: the chain was rewritten", w.N))
		case !st.started:
			return broke(fmt.Sprintf("no event of the stream is left (in the files given), though an earlier check found it ending at position %d: events were cut off its end (or the stream deleted)", w.N))
		case w.N > st.lastN:
			return broke(fmt.Sprintf("the stream ends at position %d, before the head an earlier check found at %d: events were cut off its end (or the stream deleted)", st.lastN, w.N))
		default:
			return broke(fmt.Sprintf("the event an earlier check found at position %d is missing", w.N))
		}
	}
	return nil
}

// check checks one chained event against its stream's state and moves
// the state on.
func check(k Key, st *streamState, e core.Event, opt Options, rep *Report) *Break {
	c := e.Chain
	broke := func(format string, a ...any) *Break {
		return &Break{Seq: e.Seq, Stream: c.Stream, Reason: fmt.Sprintf(format, a...)}
	}
	if c.N <= st.lastN {
		return broke("position %d is not after the previous event's %d: events were moved", c.N, st.lastN)
	}
	// A walk that may start mid-chain, given the stream's earlier head,
	// starts the stream there when its first event comes after it: the
	// event must continue from the head (Options.Heads).
	fromHead := !st.started && opt.MidChain && st.want.Hash != "" && c.N > st.want.N
	if fromHead {
		st.fromHead()
	}
	// Where the event does not link to the one before it, the stretches
	// purges dropped between them may bridge the gap: follow them. An
	// event a run covers that is still there (an export taken before the
	// purge) needs no bridge and is checked as it is.
	if c.Prev != st.prev {
		if path, ok := st.bridges(c.N, c.Prev); ok {
			for _, r := range path {
				st.enter(r.From, r.Prev)
				st.see(r.To, r.Last)
			}
		}
	}
	switch {
	case c.Prev == st.prev: // linked (or the stream's first event)
	case fromHead:
		return broke("it does not link to the head an earlier check found at position %d (nor through runs purged since): the stream was cut short, or deleted and begun again, or the files given do not continue from that head", st.want.N)
	case !st.started && opt.MidChain:
		rep.MidChain = append(rep.MidChain, e.Seq)
	case !st.started:
		return broke("the stream's first event links to an earlier one: events before it were deleted")
	default:
		return broke("it does not link to the event before it (seq %d): an event was deleted, inserted or moved", st.lastSeq)
	}
	if !st.started {
		st.firstN = c.N
	}
	w, ok := ParseWitness(c.Witness)
	if !ok {
		return broke("its witness %q is malformed", c.Witness)
	}
	d, err := k.Digest(e, c.Stream, w)
	if err != nil || d != c.Digest {
		return broke("its digest does not match: the event was altered (or the audit key is not the one it was written with)")
	}
	if at, ok := st.repeats(d, c.N); ok {
		return broke("it repeats the keyed digest of the event at position %d: a copy of it, its link recomputed", at)
	}
	if e.Kind == core.EventCheckpoint {
		keyed, ok := keyedRuns(e)
		switch {
		case ok && keyed != c.Purged:
			return broke("its purged runs are not the ones it was written with: runs were forged to bridge deleted events")
		case ok:
			st.keyedCheckpoint = true
		case c.Purged != "" && st.keyedCheckpoint:
			return broke("a checkpoint whose runs are not under the key comes after one whose are: a checkpoint of an earlier version was copied in")
		}
	}
	if Link(c.Prev, c.N, c.Digest, c.Purged) != c.Hash {
		return broke("its hash does not match its link: the chain was altered")
	}
	if w.Hash != "" {
		if w.N >= c.N {
			return broke("it witnesses position %d, not before its own", w.N)
		}
		h, seen := st.heads[w.N]
		switch {
		case seen && h != w.Hash:
			return broke("the chain at position %d is not what it was when this event was written: events before it were deleted, moved or altered (or lost in a failover of Redis without durability)", w.N)
		case seen:
			rep.Witnessed++
		case w.N >= st.firstN && len(st.order) > 0 && w.N > st.order[0] && !st.inRun(w.N):
			return broke("the event at position %d that it witnesses is missing (deleted, or lost in a failover of Redis without durability)", w.N)
		}
	}
	st.enter(c.N, c.Prev)
	st.see(c.N, c.Hash)
	st.lastSeq = e.Seq
	return nil
}

// EventLog is what StoreWalk reads: a store's log (core.EventLog's
// Events).
type EventLog interface {
	Events(ctx context.Context, since int64, limit int) ([]core.Event, error)
}

// pageSize is how many events StoreWalk reads at a time.
const pageSize = 1000

// StoreWalk walks a store's whole log, page by page. On a Redis store of
// several shards the pages merge the shards' streams by Seq (each
// stream's events stay in order); verify a busy cluster from an export,
// or at a quiet moment, since an event appended meanwhile below a seq
// already read would be missed and show as a break.
func StoreWalk(ctx context.Context, log EventLog) Walk {
	return func(yield func(core.Event) error) error {
		var since int64
		for {
			evs, err := log.Events(ctx, since, pageSize)
			if err != nil {
				return err
			}
			for _, e := range evs {
				if err := yield(e); err != nil {
					return err
				}
				since = e.Seq
			}
			if len(evs) < pageSize {
				return nil
			}
		}
	}
}
