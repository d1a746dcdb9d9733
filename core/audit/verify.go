package audit

import (
	"context"
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
}

func (b *Break) Error() string {
	return fmt.Sprintf("audit chain broken at seq %d (stream %d): %s", b.Seq, b.Stream, b.Reason)
}

// Report is what a walk found.
type Report struct {
	Events int `json:"events"`
	// Unchained events were written before the chain began (a log kept
	// by an earlier version); they come before every chained one.
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
	// short or rewritten, which no link inside the chain can show.
	Heads map[int]string
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

// bridge is the purged run that continues the chain from where the
// stream stands towards position n: after what was followed, before n,
// linked to the last hash.
func (st *streamState) bridge(n int64) (Run, bool) {
	for _, r := range st.runs {
		if r.From > st.lastN && r.To < n && r.Prev == st.prev {
			return r, true
		}
	}
	return Run{}, false
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
	}
	var rep Report
	chained := false
	stop := errors.New("break")
	err = walk(func(e core.Event) error {
		rep.Events++
		if e.Chain == nil {
			if chained {
				rep.Break = &Break{Seq: e.Seq, Reason: "not chained, though it comes after chained events: inserted, or its chain stripped"}
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
		rep.Break = cutShort(streams, opt.MidChain)
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
// an earlier walk found (Options.Heads), or nil. A walk that starts
// mid-chain (midChain) cannot tell of a head before its start.
func cutShort(streams map[int]*streamState, midChain bool) *Break {
	for _, s := range slices.Sorted(maps.Keys(streams)) {
		st := streams[s]
		w := st.want
		broke := func(reason string) *Break {
			return &Break{Seq: st.lastSeq, Stream: s, Reason: reason}
		}
		switch {
		case w.Hash == "" || st.got == w.Hash || st.inRun(w.N) || midChain && (!st.started || w.N < st.firstN):
			// none given, still there, purged since, or before the walk
		case st.got != "":
			return broke(fmt.Sprintf("position %d is not the event an earlier check found there: the chain was rewritten", w.N))
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
	// Where the event does not link to the one before it, the stretches
	// purges dropped between them may bridge the gap: follow them. An
	// event a run covers that is still there (an export taken before the
	// purge) needs no bridge and is checked as it is.
	for c.Prev != st.prev {
		r, ok := st.bridge(c.N)
		if !ok {
			break
		}
		st.see(r.To, r.Last)
	}
	switch {
	case c.Prev == st.prev: // linked (or the stream's first event)
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
