package app_test

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	"github.com/askbridge/askbridge/store/bolt"
)

// embeddedLog appends n loose events under key to the embedded store in
// dir, as serve would, and closes it.
func embeddedLog(t *testing.T, dir string, key audit.Key, n int) {
	t.Helper()
	s, err := bolt.Open(filepath.Join(dir, "askbridge.db"), bolt.Options{AuditKey: key, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		if _, err := s.Append(t.Context(), core.Event{Kind: core.EventRefused, Reason: "r" + strconv.Itoa(i), At: at.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// cutEmbeddedEnd deletes the embedded store's events after seq keep and
// sets its chain's head and sequence back to match, with the file and
// without the key.
func cutEmbeddedEnd(t *testing.T, dir string, keep uint64) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, "askbridge.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		events := tx.Bucket([]byte("events"))
		c := events.Cursor()
		var e core.Event
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			if uint64(e.Chain.N) == keep {
				break
			}
		}
		head := strconv.FormatUint(keep, 10) + " " + e.Chain.Hash
		for seq := keep + 1; seq <= events.Sequence(); seq++ {
			if err := events.Delete(binary.BigEndian.AppendUint64(nil, seq)); err != nil {
				return err
			}
		}
		if err := events.SetSequence(keep); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("chain"), []byte(head))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAuditVerifyFindsTheEmbeddedEndCut: on the embedded store, events
// cut off the log's end while serve was stopped (the head set back to
// match) are found by `audit verify` of the store, with no earlier report
// to compare with: the store keeps, under the key, where its chain ends.
// Before, the cut log verified as whole (exit 0).
func TestAuditVerifyFindsTheEmbeddedEndCut(t *testing.T) {
	const secret = "an audit key for the end test"
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_DATA_DIR": dir, "ASKBRIDGE_AUDIT_KEY": secret}[k]
	}
	embeddedLog(t, dir, audit.Key(secret), 6)
	if out := auditVerify(t, env, 0); !strings.Contains(out, "holds: 6 events") {
		t.Fatalf("the whole log: %s", out)
	}
	cutEmbeddedEnd(t, dir, 4)
	if out := auditVerify(t, env, app.ExitError); !strings.Contains(out, "BROKEN") || !strings.Contains(out, "cut off its end") {
		t.Fatalf("the log with its end cut: %s", out)
	}
}

// TestAuditVerifyAcrossAKeyChange: a log chained under one audit key and
// then, once the key was changed, under another verifies when verify is
// given the earlier key (--old-key, a file holding it, as audit.key
// does) and says where the chain moved to the new key; without it, the
// first event under the earlier key breaks, with a hint at --old-key.
// Before, no flag took an earlier key, and a log that had been under two
// keys could not be verified at all.
func TestAuditVerifyAcrossAKeyChange(t *testing.T) {
	const oldSecret, newSecret = "the audit key before", "the audit key after"
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_DATA_DIR": dir, "ASKBRIDGE_AUDIT_KEY": newSecret}[k]
	}
	embeddedLog(t, dir, audit.Key(oldSecret), 3)
	embeddedLog(t, dir, audit.Key(newSecret), 2)
	oldKey := filepath.Join(t.TempDir(), "audit.key.old")
	if err := os.WriteFile(oldKey, []byte(oldSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := auditVerify(t, env, app.ExitError); !strings.Contains(out, "BROKEN at seq 1 ") || !strings.Contains(out, "--old-key") {
		t.Fatalf("without the earlier key: %s", out)
	}
	out := auditVerify(t, env, 0, "--old-key", oldKey)
	if !strings.Contains(out, "holds: 6 events") || !strings.Contains(out, "from seq 4") {
		t.Fatalf("with the earlier key: %s", out)
	}
	// The earlier key after the later one is not taken: the chain moves
	// to a newer key only.
	embeddedLog(t, dir, audit.Key(oldSecret), 1)
	if out := auditVerify(t, env, app.ExitError, "--old-key", oldKey); !strings.Contains(out, "BROKEN") {
		t.Fatalf("an event under the earlier key after the later: %s", out)
	}
}

// putEmbeddedEndRecord sets the embedded store's record of where its
// chain ends to the one the note at seq holds (payload end_record),
// with the file and without the key: anyone who reads the log can.
func putEmbeddedEndRecord(t *testing.T, dir string, seq uint64) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, "askbridge.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		var note struct {
			Payload struct {
				Record string `json:"end_record"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(tx.Bucket([]byte("events")).Get(binary.BigEndian.AppendUint64(nil, seq)), &note); err != nil {
			return err
		}
		if note.Payload.Record == "" {
			t.Fatalf("event %d holds no record", seq)
		}
		return tx.Bucket([]byte("meta")).Put([]byte("chain-end"), []byte(note.Payload.Record))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAuditVerifyFindsAnEndCutAfterAKeyChange: after a change of audit
// key, the note serve writes holds the old key's record of the end then.
// Someone who can write the file but has not the key cuts events off
// the end and puts that record back; serve, started again, notes the
// record it found. `audit verify` finds the cut: the record names an
// event before the note, after which every end is recorded. Before, a
// record of any event still in the chain was taken, and the cut log
// verified (exit 0).
func TestAuditVerifyFindsAnEndCutAfterAKeyChange(t *testing.T) {
	const oldSecret, newSecret = "the audit key before", "the audit key after"
	dir := t.TempDir()
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_DATA_DIR": dir, "ASKBRIDGE_AUDIT_KEY": newSecret}[k]
	}
	oldKey := filepath.Join(t.TempDir(), "audit.key.old")
	if err := os.WriteFile(oldKey, []byte(oldSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	embeddedLog(t, dir, audit.Key(oldSecret), 3)
	embeddedLog(t, dir, audit.Key(newSecret), 4) // the note at 4, then 5..8
	if out := auditVerify(t, env, 0, "--old-key", oldKey); !strings.Contains(out, "holds: 8 events") {
		t.Fatalf("the whole log: %s", out)
	}
	cutEmbeddedEnd(t, dir, 6)
	putEmbeddedEndRecord(t, dir, 4)
	embeddedLog(t, dir, audit.Key(newSecret), 1) // serve started again: a note at 7, then 8
	out := auditVerify(t, env, app.ExitError, "--old-key", oldKey)
	if !strings.Contains(out, "BROKEN at seq 7 ") || !strings.Contains(out, "before the note at position 4") {
		t.Fatalf("the log cut, the note's record put back: %s", out)
	}
}
