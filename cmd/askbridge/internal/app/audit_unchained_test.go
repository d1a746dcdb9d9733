package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
)

// TestAuditVerifyUnchained: an export whose events have no chain fails,
// with a hint at --allow-unchained, unless the operator says the log
// began before the chain; then its events are reported as not covered.
// Before, every chain stripped and an event edited passed with exit 0
// and a note.
func TestAuditVerifyUnchained(t *testing.T) {
	const secret = "an audit key for the CLI test"
	key := audit.Key(secret)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	// chain chains events seq from..to from the stream's beginning, as a
	// store chains its first event on; lines are their NDJSON lines.
	chain := func(from, to int64) (lines []string) {
		var head audit.Witness
		for seq := from; seq <= to; seq++ {
			e := core.Event{Seq: seq, QuestionID: "q1", At: at.Add(time.Duration(seq) * time.Second), Kind: core.EventNotified}
			c, err := key.Chain(e, 0, seq, head, "")
			if err != nil {
				t.Fatal(err)
			}
			head, e.Chain = audit.Witness{N: seq, Hash: c.Hash}, c
			b, _ := json.Marshal(e)
			lines = append(lines, string(b))
		}
		return lines
	}
	// strip takes every chain off, and edits the event at index edit.
	strip := func(lines []string, edit int) (out []string) {
		for i, line := range lines {
			var e core.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			e.Chain = nil
			if i == edit {
				e.Reason = "edited"
			}
			b, _ := json.Marshal(e)
			out = append(out, string(b))
		}
		return out
	}
	write := func(name string, lines []string) string {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	env := func(k string) string {
		if k == "ASKBRIDGE_AUDIT_KEY" {
			return secret
		}
		return ""
	}
	verify := func(want int, args ...string) string { t.Helper(); return auditVerify(t, env, want, args...) }

	stripped := write("stripped.ndjson", strip(chain(1, 4), 1))
	// (The count is worded for one: "1 events" before.)
	if out := verify(app.ExitError, stripped); !strings.Contains(out, "BROKEN at seq 1 ") || !strings.Contains(out, "--allow-unchained") || !strings.Contains(out, "\n1 event read up to it\n") {
		t.Fatalf("every chain stripped: %s", out)
	}
	if out := verify(0, "--allow-unchained", stripped); !strings.Contains(out, "4 events before them were written before the chain began") {
		t.Fatalf("every chain stripped, allowed: %s", out)
	}
	// A log begun before the chain: events 1 and 2 unchained, 3 and 4
	// chained from the stream's beginning.
	older := write("older.ndjson", append(strip(chain(1, 2), -1), chain(3, 4)...))
	if out := verify(app.ExitError, older); !strings.Contains(out, "BROKEN at seq 1 ") {
		t.Fatalf("a log begun before the chain: %s", out)
	}
	if out := verify(0, "--allow-unchained", older); !strings.Contains(out, "holds: 4 events") || !strings.Contains(out, "2 events before them") {
		t.Fatalf("a log begun before the chain, allowed: %s", out)
	}
	if out := verify(0, write("chained.ndjson", chain(1, 4))); !strings.Contains(out, "holds: 4 events") {
		t.Fatalf("a chained log: %s", out)
	}
}

// auditVerify runs "askbridge audit verify" with args and env, wants
// exit code want, and returns what it printed.
func auditVerify(t *testing.T, env func(string) string, want int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if c := app.Run(t.Context(), append([]string{"audit", "verify"}, args...), env, nil, &out, &errb); c != want {
		t.Fatalf("audit verify %v: exit %d, want %d\n%s%s", args, c, want, out.String(), errb.String())
	}
	return out.String()
}
