package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplicaIDIsStable: a replica's lease name survives a restart on the
// same data directory (so it takes back its own lease at once), differs
// for another data directory, and ASKBRIDGE_REPLICA_ID overrides it.
func TestReplicaIDIsStable(t *testing.T) {
	dir := t.TempDir()
	a, err := stableReplicaID(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := stableReplicaID(dir)
	if err != nil || b != a {
		t.Fatalf("after a restart: %q (%v), want %q", b, err, a)
	}
	host, _ := os.Hostname()
	if !strings.HasPrefix(a, host+"-") {
		t.Errorf("id %q does not name the host %q", a, host)
	}
	if fi, err := os.Stat(filepath.Join(dir, "replica.id")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("replica.id: %v, %v", fi, err)
	}
	other, err := stableReplicaID(t.TempDir())
	if err != nil || other == a {
		t.Fatalf("another data directory: %q (%v)", other, err)
	}
	s, err := LoadSettings(func(k string) string {
		if k == "ASKBRIDGE_REPLICA_ID" {
			return " pod-7 "
		}
		return ""
	})
	if err != nil || s.ReplicaID != "pod-7" {
		t.Fatalf("ASKBRIDGE_REPLICA_ID: %q, %v", s.ReplicaID, err)
	}
}
