package app

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestASecretNotMadeDurableIsNotUsed: a new secret (the audit key, the
// actor key, the admin token) is used only once it is on disk for good.
// Before, readOrCreateSecret wrote it with no fsync and returned it, so
// events made durable under it could outlive the key after a power cut;
// now a failed fsync is an error and leaves no file, and the next start
// makes a new secret.
func TestASecretNotMadeDurableIsNotUsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.key")
	failed := errors.New("fsync: input/output error")
	syncs := 0
	syncFile = func(f *os.File) error {
		syncs++
		return failed
	}
	t.Cleanup(func() { syncFile = (*os.File).Sync })

	if v, created, err := readOrCreateSecret(path); !errors.Is(err, failed) || v != "" || created {
		t.Fatalf("with fsync failing: %q, created %v, err %v; want the fsync's error and no secret", v, created, err)
	}
	if syncs == 0 {
		t.Fatal("the new secret was never synced")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the secret not made durable was left behind: %v", err)
	}

	syncFile = (*os.File).Sync
	v, created, err := readOrCreateSecret(path)
	if err != nil || !created || len(v) != 64 {
		t.Fatalf("the next start: %q, created %v, err %v; want a new secret", v, created, err)
	}
	if again, created, err := readOrCreateSecret(path); err != nil || created || again != v {
		t.Fatalf("read back: %q, created %v, err %v; want %q", again, created, err, v)
	}
}
