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
	// Unchained is set when the event has no chain at all, so that a
	// caller can say how to check a log begun before the chain
	// (Options.AllowUnchained) without reading the reason.
	Unchained bool `json:"unchained,omitempty"`
	// Unrecorded is set when the store kept no record of where the chain
	// ended (ends.go), which a store an earlier version wrote last does
	// not: AllowUnchained takes that too.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// KeyMismatch is set when the event's digest matches under no key
	// given, so that a caller can say how to give the keys of before a
	// change of key (Options.OldKeys).
	KeyMismatch bool `json:"key_mismatch,omitempty"`
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
	// Keys says, when the walk was given earlier keys (Options.OldKeys),
	// under which key each stream begins and where it moves to a later
	// one.
	Keys []KeyChange `json:"keys,omitempty"`
	// Unrecorded lists the seqs of the events at which a stream's end
	// had no keyed record in the store (ends.go), taken as the operator's
	// word (AllowUnchained): events cut off after them would not show.
	Unrecorded []int64 `json:"unrecorded,omitempty"`
	Break      *Break  `json:"break,omitempty"`
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
	//
	// It also takes a store an earlier version wrote last, which kept no
	// record of where its chain ends (Ends, and EndNotRecorded events):
	// the first time a stream's end is found so, not after one was kept.
	AllowUnchained bool
	// OldKeys are the audit keys the log was chained under before the
	// key Verify is given, oldest first. A stream's events may move from
	// one key to a later one, never back: after a change of key, only
	// events before the first under the new one may be under the old.
	// Without them, the first event under an earlier key is a break.
	OldKeys []Key
	// Ends are a store's keyed records of where its streams end (ends.go;
	// the embedded store keeps one), for a walk of that whole store:
	// each stream must end where its record says (or past it, on events
	// the walk holds: ends.go), and one with no record is a break unless
	// AllowUnchained. Nil for a walk of a store that keeps none, or of
	// exports.
	Ends map[int]string
}

// KeyChange is where a stream begins under a key, or moves to it.
type KeyChange struct {
	Stream int   `json:"stream"`
	Seq    int64 `json:"seq"`
	// Key is the key's place among Options.OldKeys, or len(OldKeys) for
	// the key Verify was given.
	Key int `json:"key"`
}

// Verify walks a log twice: once for the checkpoints' purged runs, then
// to check every link, and returns the first break in the Report (nil
// Break: the chain holds). The error is the walk's own.
func Verify(k Key, walk Walk, opt Options) (Report, error) {
	keys := append(slices.Clone(opt.OldKeys), k)
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
		if _, end := endFound(e); e.Kind == core.EventCheckpoint && !end {
			rep.Checkpoints++ // a purge's, not a note of the chain's end
		}
		if b := check(keys, state(e.Chain.Stream), e, opt, &rep); b != nil {
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
	if rep.Break == nil {
		rep.Break = checkEnds(streams, keys, opt, &rep)
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
