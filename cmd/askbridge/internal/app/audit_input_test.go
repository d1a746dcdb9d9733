package app_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
)

// TestAuditVerifyRefusesAPipe: verify reads each file twice (once for
// the purges' runs, then to check every link), and a pipe gives its
// events once, so `curl ... | askbridge audit verify /dev/stdin` (or a
// process substitution) is refused with a usage error saying to save
// the export first. Before, the second read found nothing, and any
// export piped in, an unchained event here, "held" with 0 events and
// exit 0.
func TestAuditVerifyRefusesAPipe(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_AUDIT_KEY": "an audit key for the pipe test"}[k]
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	// Far less than a pipe's buffer: the write does not wait for a reader.
	if _, err := fmt.Fprintln(w, `{"seq":1,"kind":"answered","at":"2026-03-01T09:00:00Z"}`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var out, errb bytes.Buffer
	pipe := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if c := app.Run(t.Context(), []string{"audit", "verify", pipe}, env, nil, &out, &errb); c != app.ExitUsage {
		t.Fatalf("a pipe: exit %d, want %d\n%s%s", c, app.ExitUsage, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "not a regular file") || !strings.Contains(errb.String(), "save the export") || out.Len() != 0 {
		t.Fatalf("a pipe: stdout %q, stderr %q", out.String(), errb.String())
	}
}

// TestAuditVerifyBoundsWhatItReads: a file given for a key (--old-key,
// or the data directory's audit.key) or an earlier report (--heads) is
// read up to a bound far above what it holds, and one larger is refused
// by name; before, each was read whole, so an export given by mistake
// was read into memory, and /dev/zero never ended.
func TestAuditVerifyBoundsWhatItReads(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "export.ndjson")
	if err := os.WriteFile(big, bytes.Repeat([]byte("a"), 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"ASKBRIDGE_AUDIT_KEY": "an audit key for the bounds test"}[k]
	}
	for _, flag := range []string{"--old-key", "--heads"} {
		var out, errb bytes.Buffer
		if c := app.Run(t.Context(), []string{"audit", "verify", flag, big, big}, env, nil, &out, &errb); c != app.ExitUsage {
			t.Fatalf("%s of 2 MiB: exit %d, want %d\n%s%s", flag, c, app.ExitUsage, out.String(), errb.String())
		}
		if !strings.Contains(errb.String(), big+" holds more than") {
			t.Fatalf("%s of 2 MiB: stderr %q", flag, errb.String())
		}
	}
	// The data directory's audit.key, read when ASKBRIDGE_AUDIT_KEY is not set.
	if err := os.WriteFile(filepath.Join(dir, "audit.key"), bytes.Repeat([]byte("k"), 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	dataDir := func(k string) string { return map[string]string{"ASKBRIDGE_DATA_DIR": dir}[k] }
	if c := app.Run(t.Context(), []string{"audit", "verify", big}, dataDir, nil, &out, &errb); c != app.ExitError || !strings.Contains(errb.String(), "audit.key holds more than") {
		t.Fatalf("an audit.key of 2 MiB: exit %d\n%s%s", c, out.String(), errb.String())
	}
}
