package bolt_test

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/store/bolt"
)

var auditKey = audit.Key("bolt audit key")

// auditedFile writes a log of six events to a fresh file, closes it, and
// returns its path.
func auditedFile(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	s, path := openTemp(t, bolt.Options{AuditKey: auditKey})
	q1, q2, q3 := question(0, core.Reversible), question(time.Second, core.Reversible), question(2*time.Second, core.HardToReverse)
	for _, q := range []*core.Question{q1, q2, q3} {
		mustCreate(t, s, q) // seqs 1-3
	}
	if _, err := s.Resolve(ctx, answer(q1, "ann", t0.Add(time.Minute))); err != nil { // 4
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, core.Event{QuestionID: q2.ID, Kind: core.EventRefused, Actor: "p-bob", At: t0.Add(2 * time.Minute)}); err != nil { // 5
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, answer(q2, "ann", t0.Add(3*time.Minute))); err != nil { // 6
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// verifyFile opens the store on path again and verifies its log.
func verifyFile(t *testing.T, path string) audit.Report {
	t.Helper()
	s := openAt(t, path, bolt.Options{AuditKey: auditKey})
	rep, err := audit.Verify(auditKey, audit.StoreWalk(t.Context(), s), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// tamper edits the closed file's events bucket with bbolt, as someone
// with the file and without the key could.
func tamper(t *testing.T, path string, edit func(b *bbolt.Bucket) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { return edit(tx.Bucket([]byte("events"))) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// TestAuditVerifyFindsTamperingInTheFile: an event altered, deleted or
// moved in the bolt file is named by its seq; the file as written
// verifies.
func TestAuditVerifyFindsTamperingInTheFile(t *testing.T) {
	if rep := verifyFile(t, auditedFile(t)); rep.Break != nil || rep.Events != 6 || rep.Witnessed != 5 {
		t.Fatalf("clean file: %+v", rep)
	}
	for name, tc := range map[string]struct {
		edit func(b *bbolt.Bucket) error
		seq  int64
	}{
		"altered": {func(b *bbolt.Bucket) error {
			var e map[string]any
			if err := json.Unmarshal(b.Get(seqKey(5)), &e); err != nil {
				return err
			}
			e["actor"] = "p-someone-else"
			v, _ := json.Marshal(e)
			return b.Put(seqKey(5), v)
		}, 5},
		"deleted": {func(b *bbolt.Bucket) error { return b.Delete(seqKey(3)) }, 4},
		"reordered": {func(b *bbolt.Bucket) error {
			two, four := append([]byte(nil), b.Get(seqKey(2))...), append([]byte(nil), b.Get(seqKey(4))...)
			if err := b.Put(seqKey(2), four); err != nil {
				return err
			}
			return b.Put(seqKey(4), two)
		}, 2},
	} {
		t.Run(name, func(t *testing.T) {
			path := auditedFile(t)
			tamper(t, path, tc.edit)
			rep := verifyFile(t, path)
			if rep.Break == nil || rep.Break.Seq != tc.seq {
				t.Fatalf("report %+v; want a break at seq %d", rep, tc.seq)
			}
		})
	}
}
