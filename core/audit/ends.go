package audit

import (
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// # Where a stream ends
//
// No link can show events cut off a stream's end: what is left is a
// whole chain. A store whose write knows the chain's head (the embedded
// one) therefore keeps, beside the head and in the same write, a record
// of it under the key (Key.EndRecord), and a walk of the whole store is
// given it (Options.Ends): the stream must end there, or further on at
// events the walk holds linked on from it (what an earlier version
// leaves, askbridge rolled back and forward: recordedAt). Someone
// without the key who cuts events off the end cannot write the record of
// the earlier end; they can only put back one they kept from an end at
// or before the cut (and after the newest note: "Records put back"),
// which passes as a rollback's would (only an earlier report,
// Options.Heads, finds that).
//
// The writer checks the record when it opens the store. Should it not be
// under its key for the head it finds (the key was changed, an earlier
// version wrote the store last, or the end was cut), chaining on would
// make the cut log whole again under the key, so it first appends an
// EndNotRecorded event saying what record it found: the walk checks that
// record, under the keys it has, against the head the event witnesses.
// A record that does not name that head is a break; none at all is
// what an earlier version leaves, and a break too unless the operator
// says the log began under one (Options.AllowUnchained), since whoever
// cut the end could have deleted the record as well.
//
// # Records put back
//
// A record of an earlier event is taken (above) because an earlier
// version leaves one behind the events it writes. But a note (an
// EndNotRecorded event) is proof that a writer which records every end
// was there: from the note on, the record names the note or an event
// after it, whatever version writes on (an earlier one leaves it where
// it was). So a record
// (the store's, or one a later note found) naming an event before the
// newest note the walk holds is a break. Without that, the record the
// note itself holds, which anyone who can read the log can copy (after
// every change of key, it is the old key's record of the end then),
// let someone who can write the store but has not the key cut any
// events after the note off the end and put it back: the store's
// record then named an event still in the chain, and askbridge,
// reopening the store, noted that record, which was taken as well.
//
// What this cannot find (the threat it leaves): a record copied from
// the store after the newest note, put back with the events after it
// cut; and a whole copy of the store restored (a rollback), whose
// records and chain agree with each other and hold no trace of what
// came after. Nothing in the store can show either, since whoever
// restores it restores all of it; only something kept where the store
// is not rolled back with it can: an earlier report's heads
// (Options.Heads, verify --heads), which the log must still reach (or
// the event at the head's position must be the one the report named),
// unless a purge has dropped the head since, inside a run whose hashes
// between its ends are not kept. Redis keeps no record (its scripts
// must not hold the key), so there the heads are the only check of the
// end.

// endDomain separates the record of a stream's end from the digests.
const endDomain = "askbridge-audit-end-v1"

// EndRecord is the keyed record that stream ends at end (hex).
func (k Key) EndRecord(stream int, end Witness) string {
	m := macs.get(k)
	defer macs.put(m)
	m.buf = m.buf[:0]
	m.field(endDomain)
	m.field(strconv.Itoa(stream))
	m.field(end.String())
	m.h.Reset()
	m.h.Write(m.buf)
	return hex.EncodeToString(m.h.Sum(m.sum[:0]))
}

// Records reports whether record is k's record that stream ends at end.
func (k Key) Records(stream int, end Witness, record string) bool {
	got, err := hex.DecodeString(record)
	if err != nil || end.Hash == "" {
		return false
	}
	want, _ := hex.DecodeString(k.EndRecord(stream, end)) // EndRecord's own hex
	return hmac.Equal(got, want)
}

// endPayload is an EndNotRecorded event's payload: the record the writer
// found ("" none; "-" one that was not a record at all).
type endPayload struct {
	Found *string `json:"end_record"`
}

// EndNotRecorded is the event a writer appends, before anything else,
// when the store's record of where its chain ends (found, as it was
// stored; "" for none) is not its key's record of the head it found. Its
// witness is that head, and its digest covers found.
func EndNotRecorded(found string, now time.Time) core.Event {
	if found != "" && !isHex(found) {
		found = "-" // not a record: kept as such, never as text of whoever wrote it
	}
	payload, _ := json.Marshal(endPayload{Found: &found}) // plain data always encodes
	return core.Event{At: now.UTC(), Kind: core.EventCheckpoint, Reason: "the chain's end was not recorded under this audit key", Payload: payload}
}

// endFound is the record an EndNotRecorded event says its writer found,
// and whether e is one.
func endFound(e core.Event) (string, bool) {
	if e.Kind != core.EventCheckpoint {
		return "", false
	}
	var p endPayload
	if json.Unmarshal(e.Payload, &p) != nil || p.Found == nil {
		return "", false
	}
	return *p.Found, true
}

// checkFound checks an EndNotRecorded event e, under keys[key], which
// witnesses the head w: the record it found must be the record, under
// one of keys up to its own, of w or of an event before it the walk
// holds (recordedAt), and not before the newest note before e ("Records
// put back"). None is taken once, and only as the operator's word.
func (st *streamState) checkFound(keys []Key, key int, e core.Event, found string, w Witness, opt Options, rep *Report) *Break {
	stream := e.Chain.Stream
	broke := func(reason string) *Break { return &Break{Seq: e.Seq, Stream: stream, Reason: reason} }
	noted := st.noted // the newest note before this one: a record from before it was put back
	defer func() { st.recorded, st.noted = true, e.Chain.N }()
	if found == "" {
		switch {
		case st.recorded:
			return broke("askbridge found no record of where the chain ended when it opened the store here, though it had kept one since an earlier such event: the record was deleted, and events may have been cut off the end")
		case !opt.AllowUnchained:
			b := broke("askbridge found no keyed record of where the chain ended when it opened the store here: an earlier version wrote the store last, or the record was deleted with events cut off the end")
			b.Unrecorded = true
			return b
		}
		rep.Unrecorded = append(rep.Unrecorded, st.lastSeq)
		return nil
	}
	// Against a head the walk does not hold (before an export's first
	// event, or further back than it keeps) the record cannot be checked.
	if _, held := st.heads[w.N]; !held {
		return nil
	}
	at, ok := st.recordedAt(keys[:key+1], stream, w.N, found)
	switch {
	case !ok:
		return broke(fmt.Sprintf("when askbridge opened the store here, the chain ended at position %d, but the store's keyed record of its end named another end: events were cut off the end while askbridge was stopped (or the record was forged, or is under a key not given)", w.N))
	case at < noted:
		return broke(fmt.Sprintf("when askbridge opened the store here, the chain ended at position %d, but the store's keyed record of its end named position %d, before the note at position %d after which every end is recorded: events were cut off the end while askbridge was stopped, and an earlier record put back", w.N, at, noted))
	}
	return nil
}

// checkEnds checks each stream's end against the store's records of it
// (Options.Ends), once the walk is done; nil Ends checks nothing.
func checkEnds(streams map[int]*streamState, keys []Key, opt Options, rep *Report) *Break {
	if opt.Ends == nil {
		return nil
	}
	all := maps.Clone(opt.Ends)
	for s, st := range streams {
		if st.started {
			all[s] = opt.Ends[s]
		}
	}
	for _, s := range slices.Sorted(maps.Keys(all)) {
		st := streams[s]
		record, has := opt.Ends[s]
		switch {
		case st == nil || !st.started:
			return &Break{Stream: s, Reason: "the store records where this stream's chain ends, but no event of it is left: events were cut off its end"}
		case !has || record == "":
			b := &Break{Seq: st.lastSeq, Stream: s, Reason: "the store keeps no keyed record of where the chain ends (one is written with every event): it was deleted, and events may have been cut off the end, or an earlier version wrote the store last"}
			if st.recorded {
				return b
			}
			if !opt.AllowUnchained {
				b.Unrecorded = true
				return b
			}
			rep.Unrecorded = append(rep.Unrecorded, st.lastSeq)
		// Under the key given only: the writer records the end under its
		// key, and after a change of key first under the new one
		// (EndNotRecorded), so a record under an earlier key is one
		// forged by whoever holds it, or written before askbridge ran
		// under the new key.
		default:
			at, ok := st.recordedAt(keys[len(keys)-1:], s, st.lastN, record)
			switch {
			case !ok:
				return &Break{Seq: st.lastSeq, Stream: s, Reason: fmt.Sprintf("the log ends at position %d, not where the store's keyed record of its end says: events were cut off its end, or the record was forged (or askbridge has not written the store since the audit key was changed: check it under the key it was written with)", st.lastN)}
			case at < st.noted:
				return &Break{Seq: st.lastSeq, Stream: s, Reason: fmt.Sprintf("the log ends at position %d, and the store's keyed record of its end names position %d, before the note at position %d after which every end is recorded: events were cut off its end, and an earlier record put back", st.lastN, at, st.noted)}
			}
		}
	}
	return nil
}

// recordedAt is the position of the event, held by the walk at or
// before position upTo (one of the recent ones it keeps, ring), that
// record says, under one of keys, the stream ends at, and whether there
// is one. The stream's newest event is the one the writer records; an
// earlier one is a record an earlier version left when it wrote the
// events since without keeping it (askbridge rolled back and forward
// again): those events are under the key and linked, so nothing was
// cut, unless a note came after it (st.noted, "Records put back").
func (st *streamState) recordedAt(keys []Key, stream int, upTo int64, record string) (int64, bool) {
	for i := len(st.order) - 1; i >= 0; i-- {
		at := Witness{N: st.order[i], Hash: st.heads[st.order[i]]}
		if at.N > upTo {
			continue
		}
		for _, k := range keys {
			if k.Records(stream, at, record) {
				return at.N, true
			}
		}
	}
	return 0, false
}
