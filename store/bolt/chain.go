package bolt

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// The audit chain (core/audit) on the embedded store: one stream, 0,
// whose positions are the events' seqs. Every event is chained in the
// write transaction that appends it, so its witness is always the event
// before it and its digest is the HMAC over that event's hash and its
// own bytes. The head is kept in meta ("chain"), so the next append
// finds it without reading the last event back, and beside it, in the
// same write, the key's record of it ("chain-end", audit.Key.EndRecord),
// so that events cut off the end, the head set back to match, are found
// (core/audit, ends.go): the file is checked for it at Open (checkEnd).

// appendEvent assigns the next seq to e, chains it and stores it,
// indexed under its question (so Purge drops it with the question) or,
// for an event about no stored question, by time (so Purge drops it by
// age).
func (s *Store) appendEvent(tx *bbolt.Tx, e core.Event) (core.Event, error) {
	return appendChained(tx, s.audit, e, "")
}

// appendChained is appendEvent under key, with a checkpoint's purged
// runs.
func appendChained(tx *bbolt.Tx, key audit.Key, e core.Event, purged string) (core.Event, error) {
	events := tx.Bucket(bucketEvents)
	seq, err := nextSeq(events)
	if err != nil {
		return core.Event{}, err
	}
	e.Seq = int64(seq)
	head, err := chainHead(tx)
	if err != nil {
		return core.Event{}, err
	}
	if e.Chain, err = key.Chain(e, 0, e.Seq, head, purged); err != nil {
		return core.Event{}, core.Errorf(core.CodeInvalid, "append event", "%v", err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return core.Event{}, fmt.Errorf("encode event: %w", err)
	}
	if err := events.Put(u64(seq), b); err != nil {
		return core.Event{}, err
	}
	end := audit.Witness{N: e.Seq, Hash: e.Chain.Hash}
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(metaChain, []byte(strconv.FormatInt(end.N, 10)+" "+end.Hash)); err != nil {
		return core.Event{}, err
	}
	if err := meta.Put(metaChainEnd, []byte(key.EndRecord(0, end))); err != nil {
		return core.Event{}, err
	}
	if e.QuestionID != "" && tx.Bucket(bucketQuestions).Get([]byte(e.QuestionID)) != nil {
		k, err := questionEventKey(e.QuestionID, seq)
		if err != nil {
			return core.Event{}, err
		}
		return e, tx.Bucket(bucketQuestionEvents).Put(k, nil)
	}
	return e, tx.Bucket(bucketLooseEvents).Put(looseEventKey(e.At, seq), nil)
}

// nextSeq is the seq of the next event: the log's next sequence number,
// or, should the newest event be at or past it (the sequence set back in
// the file), the one after that event, so that an append never puts an
// event over one already there, nor before it.
func nextSeq(events *bbolt.Bucket) (uint64, error) {
	seq, err := events.NextSequence()
	if err != nil {
		return 0, err
	}
	if last, _ := events.Cursor().Last(); last != nil && seqOfSuffix(last) >= seq {
		seq = seqOfSuffix(last) + 1
		return seq, events.SetSequence(seq)
	}
	return seq, nil
}

// checkEnd runs when the store is opened to write: should the record of
// where the chain ends not be key's record of the head (the key was
// changed, an earlier version wrote the file last, or events were cut off
// the end), it appends the event that says what record it found
// (audit.EndNotRecorded), before any other is chained on, so that the
// log does not come out whole under the key however it was found.
func checkEnd(tx *bbolt.Tx, key audit.Key, now time.Time) error {
	head, err := chainHead(tx)
	if err != nil || head.Hash == "" {
		return err
	}
	found := string(tx.Bucket(bucketMeta).Get(metaChainEnd))
	if key.Records(0, head, found) {
		return nil
	}
	_, err = appendChained(tx, key, audit.EndNotRecorded(found, now), "")
	return err
}

// ends is the store's record of where its chain ends, by stream, as
// audit.Options.Ends takes it: none if it keeps none.
func ends(tx *bbolt.Tx) map[int]string {
	out := map[int]string{}
	if v := tx.Bucket(bucketMeta).Get(metaChainEnd); v != nil {
		out[0] = string(v)
	}
	return out
}

// chainHead is the newest chained event's seq and hash (none before the
// first).
func chainHead(tx *bbolt.Tx) (audit.Witness, error) {
	v := tx.Bucket(bucketMeta).Get(metaChain)
	if v == nil {
		return audit.Witness{}, nil
	}
	n, h, _ := strings.Cut(string(v), " ")
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil {
		return audit.Witness{}, fmt.Errorf("audit chain head %q: %w", v, err)
	}
	return audit.Witness{N: seq, Hash: h}, nil
}

// checkpoint appends, before the purge deletes anything, the event that
// keeps the chain verifiable across the events at seqs: their runs, with
// those of any checkpoint among them folded in. Events written before
// the chain have none and need none.
func (s *Store) checkpoint(tx *bbolt.Tx, seqs []uint64, cutoff, now time.Time) error {
	var parts []audit.Run
	events := tx.Bucket(bucketEvents)
	for _, seq := range seqs {
		v := events.Get(u64(seq))
		if v == nil {
			continue
		}
		var e core.Event
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("decode event %d: %w", seq, err)
		}
		if e.Chain == nil {
			continue
		}
		if e.Chain.Purged != "" {
			carried, err := audit.ParseRuns(e.Chain.Purged)
			if err != nil {
				return fmt.Errorf("event %d: %w", seq, err)
			}
			parts = append(parts, carried...)
		}
		parts = append(parts, audit.Run{From: int64(seq), To: int64(seq), Prev: e.Chain.Prev, Last: e.Chain.Hash})
	}
	if len(parts) == 0 {
		return nil
	}
	runs := audit.EncodeRuns(audit.Runs(parts))
	_, err := appendChained(tx, s.audit, audit.Checkpoint(cutoff, now, runs), runs)
	return err
}
