package bolt_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/store/bolt"
)

// cutEnd deletes the closed file's events from seq keep+1 on and sets
// the chain's head (meta "chain") to the event at keep, as someone with
// the file and without the key would who cuts events off the log's end
// and leaves it looking whole. reseq also sets the events' sequence back,
// so that the next event takes the first seq cut.
func cutEnd(t *testing.T, path string, keep uint64, reseq bool) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		events := tx.Bucket([]byte("events"))
		var e core.Event
		if err := json.Unmarshal(events.Get(seqKey(keep)), &e); err != nil {
			return err
		}
		for seq := keep + 1; events.Get(seqKey(seq)) != nil; seq++ {
			if err := events.Delete(seqKey(seq)); err != nil {
				return err
			}
		}
		if reseq {
			if err := events.SetSequence(keep); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("chain"), []byte(strconv.FormatUint(keep, 10)+" "+e.Chain.Hash))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// appendOne opens the store on path, appends one loose event and closes
// it: askbridge serve started again on the file, and writing.
func appendOne(t *testing.T, path string, key audit.Key) core.Event {
	t.Helper()
	s := openAt(t, path, bolt.Options{AuditKey: key})
	e, err := s.Append(t.Context(), core.Event{Kind: core.EventRefused, Reason: "later", At: t0.Add(10 * 60e9)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAuditEndCutOffIsFoundOnceWrittenAfter: events cut off the end of
// the log while askbridge was stopped, the head set back to match, are
// found by verify even after askbridge has started on the file again and
// chained new events onto the cut log. Before, the writer took the head
// it found, chained on from it under the key, and so made the cut log
// whole: nothing in the chain showed the events had been there.
func TestAuditEndCutOffIsFoundOnceWrittenAfter(t *testing.T) {
	for _, reseq := range []bool{false, true} {
		t.Run("reseq="+strconv.FormatBool(reseq), func(t *testing.T) {
			path := auditedFile(t)
			cutEnd(t, path, 4, reseq) // 5 and 6 cut off
			appendOne(t, path, auditKey)
			rep := verifyFile(t, path)
			if rep.Break == nil || !strings.Contains(rep.Break.Reason, "cut off") {
				t.Fatalf("report %+v; want a break that says events were cut off the end", rep)
			}
		})
	}
}

// TestAppendNeverOverwritesAnEvent: an event log whose sequence was set
// back (the file edited) does not make the next append overwrite an
// event already there: it goes after the newest one. Before, the append
// took the sequence's next number and put its event over the one stored
// under it.
func TestAppendNeverOverwritesAnEvent(t *testing.T) {
	path := auditedFile(t)
	var before []byte
	tamper(t, path, func(b *bbolt.Bucket) error {
		before = bytes.Clone(b.Get(seqKey(3)))
		return b.SetSequence(2)
	})
	if e := appendOne(t, path, auditKey); e.Seq != 7 {
		t.Fatalf("the append took seq %d; want 7, after the newest event", e.Seq)
	}
	tamper(t, path, func(b *bbolt.Bucket) error {
		if got := b.Get(seqKey(3)); !bytes.Equal(got, before) {
			t.Errorf("event 3 was overwritten: %s", got)
		}
		return nil
	})
	if rep := verifyFile(t, path); rep.Break != nil || rep.Events != 7 {
		t.Fatalf("report %+v; want the seven events to verify", rep)
	}
}

// verifyLog verifies the closed file's log as `audit verify` does: read
// only, and given the store's record of where its chain ends.
func verifyLog(t *testing.T, path string, opt audit.Options) audit.Report {
	t.Helper()
	l, err := bolt.OpenLog(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if opt.Ends, err = l.Ends(); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(auditKey, audit.StoreWalk(t.Context(), l), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestLogEndsFindACutEnd: the file keeps, under the key, where its chain
// ends, so a check of the file finds events cut off its end at once.
func TestLogEndsFindACutEnd(t *testing.T) {
	path := auditedFile(t)
	if rep := verifyLog(t, path, audit.Options{}); rep.Break != nil || rep.Events != 6 {
		t.Fatalf("the whole file: %+v", rep)
	}
	cutEnd(t, path, 4, true)
	if rep := verifyLog(t, path, audit.Options{}); rep.Break == nil || rep.Break.Seq != 4 || !strings.Contains(rep.Break.Reason, "cut off its end") {
		t.Fatalf("the file with its end cut: %+v", rep)
	}
}

// TestOpenUnderANewKeyRecordsTheChange: a file opened under another audit
// key records, under the new key, the record of the chain's end it found
// under the old one before chaining on, so the log verifies given both
// keys and says where it moved to the new one.
func TestOpenUnderANewKeyRecordsTheChange(t *testing.T) {
	path := auditedFile(t)
	newKey := audit.Key("bolt audit key, changed")
	e := appendOne(t, path, newKey)
	if e.Seq != 8 {
		t.Fatalf("the event after the change took seq %d; want 8, after the record at 7", e.Seq)
	}
	l, err := bolt.OpenLog(path, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ends, err := l.Ends()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(newKey, audit.StoreWalk(t.Context(), l), audit.Options{OldKeys: []audit.Key{auditKey}, Ends: ends})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Break != nil || rep.Events != 8 || len(rep.Keys) != 2 || rep.Keys[1].Seq != 7 {
		t.Fatalf("report %+v; want eight events, under the new key from seq 7", rep)
	}
}

// TestOpenAfterAnEarlierVersionNotesTheUnrecordedEnd: a file an earlier
// version wrote last keeps no record of where its chain ends. Opened to
// write, the store says so in the chain (audit.EndNotRecorded) before it
// chains on, and a check of the file reports that end as not covered
// when told the store was upgraded (AllowUnchained), and as a break
// otherwise: someone who cut the end could have deleted the record too.
func TestOpenAfterAnEarlierVersionNotesTheUnrecordedEnd(t *testing.T) {
	path := auditedFile(t)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return tx.Bucket([]byte("meta")).Delete([]byte("chain-end")) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if e := appendOne(t, path, auditKey); e.Seq != 8 {
		t.Fatalf("the first event after the upgrade took seq %d; want 8, after the note at 7", e.Seq)
	}
	if rep := verifyLog(t, path, audit.Options{}); rep.Break == nil || !rep.Break.Unrecorded || rep.Break.Seq != 7 {
		t.Fatalf("checked as it is: %+v; want a break at the note, unrecorded", rep)
	}
	rep := verifyLog(t, path, audit.Options{AllowUnchained: true})
	if rep.Break != nil || rep.Events != 8 || len(rep.Unrecorded) != 1 || rep.Unrecorded[0] != 6 {
		t.Fatalf("checked as upgraded: %+v; want eight events, the end at 6 not covered", rep)
	}
}
