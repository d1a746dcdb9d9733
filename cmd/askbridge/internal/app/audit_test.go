package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// exportTo saves GET /v1/audit/export?since= to a file and returns its
// path and the last event's seq.
func exportTo(t *testing.T, m *app.Main, since int64, name string) (string, int64) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", m.URL+"/v1/audit/export?since="+strconv.FormatInt(since, 10), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+m.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d %v %s", resp.StatusCode, err, body)
	}
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	var last core.Event
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, last.Seq
}

// TestAuditVerifyCommand: on either store, an export verifies, a later
// export verifies as its continuation, the store's own log verifies,
// exports checked against earlier heads must hold or continue from them,
// and an event edited in an export is named by its seq with a non-zero
// exit.
func TestAuditVerifyCommand(t *testing.T) {
	apptest.ForEachBackend(t, func(t *testing.T, b apptest.Backend) {
		s := b.Settings(t)
		m := apptest.Start(t, s)
		env := func(k string) string {
			switch k {
			case "ASKBRIDGE_DATA_DIR":
				return m.Settings.DataDir // where serve keeps the audit key it made
			case "REDIS_URL":
				return s.RedisURL.Reveal()
			}
			return ""
		}
		verify := func(want int, args ...string) string { t.Helper(); return auditVerify(t, env, want, args...) }
		agent, ops := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok)
		q, err := agent.Ask(t.Context(), clarify("Which region for the bucket?"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
			t.Fatal(err)
		}
		first, last := exportTo(t, m, 0, "first.ndjson")
		if out := verify(0, first); !strings.Contains(out, "holds: 2 events") {
			t.Fatalf("first export: %s", out)
		}

		q2 := clarify("And the second bucket?")
		q2.ToolCallID = "toolu_02"
		asked, err := agent.Ask(t.Context(), q2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ops.Decline(t.Context(), asked.ID); err != nil {
			t.Fatal(err)
		}
		later, _ := exportTo(t, m, last, "later.ndjson")
		if out := verify(0, later); !strings.Contains(out, "continues an earlier export") {
			t.Fatalf("later export alone: %s", out)
		}
		if out := verify(0, first, later); !strings.Contains(out, "holds: 4 events") || strings.Contains(out, "continues") {
			t.Fatalf("both exports: %s", out)
		}
		// Given as the whole log, exports whose start was cut off break.
		if out := verify(app.ExitError, "--whole", later); !strings.Contains(out, "BROKEN") {
			t.Fatalf("the later export alone as the whole log: %s", out)
		}
		if out := verify(0, "--whole", first, later); !strings.Contains(out, "holds: 4 events") {
			t.Fatalf("both exports as the whole log: %s", out)
		}

		// An earlier check's heads: the log must still hold them, so
		// events cut off its end are found, which no link shows.
		report := filepath.Join(t.TempDir(), "report.json")
		if err := os.WriteFile(report, []byte(verify(0, "--json", first, later)), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := verify(0, "--heads", report, first, later); !strings.Contains(out, "holds: 4 events") {
			t.Fatalf("both exports against their own heads: %s", out)
		}
		if out := verify(app.ExitError, "--heads", report, first); !strings.Contains(out, "cut off its end") {
			t.Fatalf("the first export against the later heads: %s", out)
		}
		// Exports, too, must hold the heads or continue from them: no
		// events at all is every stream cut off (it verified before,
		// since a walk of exports excused a head it did not reach), and
		// the later export continues from the first one's heads.
		empty := filepath.Join(t.TempDir(), "empty.ndjson")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if out := verify(app.ExitError, "--heads", report, empty); !strings.Contains(out, "BROKEN") || !strings.Contains(out, "cut off its end") {
			t.Fatalf("no events against the heads: %s", out)
		}
		firstReport := filepath.Join(t.TempDir(), "first.json")
		if err := os.WriteFile(firstReport, []byte(verify(0, "--json", first)), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := verify(0, "--heads", firstReport, later); !strings.Contains(out, "holds: 2 events") {
			t.Fatalf("the later export against the first one's heads: %s", out)
		}

		// Someone edits who answered.
		raw, _ := os.ReadFile(first)
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		var e core.Event
		if err := json.Unmarshal([]byte(lines[1]), &e); err != nil {
			t.Fatal(err)
		}
		e.Actor = "p-someone-else"
		edited, _ := json.Marshal(e)
		lines[1] = string(edited)
		if err := os.WriteFile(first, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if out := verify(app.ExitError, first, later); !strings.Contains(out, "BROKEN at seq "+strconv.FormatInt(e.Seq, 10)+" ") {
			t.Fatalf("edited export: %s", out)
		}

		// Through the store (the embedded one once serve has let go of it).
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if out := verify(0); !strings.Contains(out, "holds: 4 events") {
			t.Fatalf("the store's log: %s", out)
		}
		// Without the key nothing is verified.
		env = func(k string) string {
			if k == "ASKBRIDGE_DATA_DIR" {
				return t.TempDir()
			}
			return ""
		}
		if out := verify(app.ExitError, first); out != "" {
			t.Fatalf("without a key: %s", out)
		}
	})
}
