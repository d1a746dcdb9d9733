package bolt_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/store/bolt"
)

// TestOpenLogOnlyReads: the log verify reads opens a store file without
// changing a byte of it and reads what Store.Events reads; it refuses,
// unchanged, a bbolt file that holds no askbridge store, rather than
// make one there and report its empty log; and it waits for, then
// refuses, a file that a serve holds.
func TestOpenLogOnlyReads(t *testing.T) {
	path := auditedFile(t)
	s := openAt(t, path, bolt.Options{AuditKey: auditKey})
	want, err := s.Events(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// While a Store holds the file, the log waits for it and says so.
	if _, err := bolt.OpenLog(path, bolt.Options{Timeout: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("open the log of a held file: %v, want it locked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := bolt.OpenLog(path, bolt.Options{AuditKey: auditKey})
	if err != nil {
		t.Fatalf("open the log: %v", err)
	}
	got, err := l.Events(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" || len(got) != 6 {
		t.Errorf("the log's events (-store +log, %d events):\n%s", len(got), d)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
		t.Errorf("opening and reading the log changed the file (%v)", err)
	}

	// A bbolt file of something else.
	other := filepath.Join(t.TempDir(), "other.db")
	db, err := bbolt.Open(other, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error { _, err := tx.CreateBucket([]byte("things")); return err }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before, err = os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bolt.OpenLog(other, bolt.Options{}); err == nil || !strings.Contains(err.Error(), "holds no askbridge store") {
		t.Errorf("open the log of another bbolt file: %v, want a refusal", err)
	}
	if after, err := os.ReadFile(other); err != nil || !bytes.Equal(before, after) {
		t.Errorf("opening the log of another bbolt file changed it (%v)", err)
	}
}
