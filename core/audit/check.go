package audit

import (
	"fmt"
	"slices"

	"github.com/askbridge/askbridge/core"
)

// check checks one chained event against its stream's state and moves
// the state on.
func check(keys []Key, st *streamState, e core.Event, opt Options, rep *Report) *Break {
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
	// A stream the walk holds from its beginning (its first event, or
	// the run purged from it, links to nothing) begins there.
	if !st.started && c.Prev == "" {
		st.begins = c.N
	}
	// Where the event does not link to the one before it, the stretches
	// purges dropped between them may bridge the gap: follow them. An
	// event a run covers that is still there (an export taken before the
	// purge) needs no bridge and is checked as it is.
	if c.Prev != st.prev {
		if path, ok := st.bridges(c.N, c.Prev); ok {
			if !st.started && path[0].Prev == "" {
				st.begins = path[0].From
			}
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
	key, b := st.keyOf(keys, e, w, rep)
	if b != nil {
		return b
	}
	if at, ok := st.repeats(c.Digest, c.N); ok {
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
			return broke("it witnesses position %d, not before its own: the stream was set back below an end its writer had seen (events cut off its end, or lost in a failover of Redis without durability)", w.N)
		}
		// Nothing precedes a stream's first event, so a witness before
		// it names events deleted from its beginning, the rest renumbered
		// past them with their links recomputed (neither is under the
		// key) so that the first left links to nothing.
		if st.begins > 0 && w.N < st.begins {
			return broke("it witnesses position %d, before the stream's first event at %d: events were deleted from its beginning and the rest renumbered (or lost in a failover of Redis without durability, the stream begun again)", w.N, st.begins)
		}
		h, seen := st.heads[w.N]
		switch {
		case seen && h != w.Hash:
			return broke("the chain at position %d is not what it was when this event was written: events before it were deleted, moved or altered (or lost in a failover of Redis without durability)", w.N)
		case seen:
			rep.Witnessed++
		case w.N >= st.firstN && len(st.order) > 0 && w.N > st.order[0] && !st.inRun(w.N):
			return broke("the event at position %d that it witnesses is missing (deleted, or cut off the end, or lost in a failover of Redis without durability)", w.N)
		}
	}
	if found, ok := endFound(e); ok {
		if b := st.checkFound(keys, key, e, found, w, opt, rep); b != nil {
			return b
		}
	}
	st.enter(c.N, c.Prev)
	st.see(c.N, c.Hash)
	st.lastSeq = e.Seq
	return nil
}

// keyOf is the place in keys of the key e's digest is under, witnessing
// w: the stream's key or a later one (the stream then moves to it, noted
// in the report when there are several keys), or a break.
func (st *streamState) keyOf(keys []Key, e core.Event, w Witness, rep *Report) (int, *Break) {
	c := e.Chain
	under := func(k Key) bool {
		d, err := k.Digest(e, c.Stream, w)
		return err == nil && d == c.Digest
	}
	for j := st.key; j < len(keys); j++ {
		if !under(keys[j]) {
			continue
		}
		if len(keys) > 1 && (!st.keyed || j != st.key) {
			rep.Keys = append(rep.Keys, KeyChange{Stream: c.Stream, Seq: e.Seq, Key: j})
		}
		st.key, st.keyed = j, true
		return j, nil
	}
	b := &Break{Seq: e.Seq, Stream: c.Stream}
	if slices.ContainsFunc(keys[:st.key], under) {
		b.Reason = "it is under an earlier audit key than the events before it: written by a process still on the earlier key, or forged by someone who holds it"
		return 0, b
	}
	b.Reason, b.KeyMismatch = "its digest does not match: the event was altered, or it is under an audit key not given (the key was changed since)", true
	return 0, b
}
