package teams

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/core"
)

// refusalLines are the "activity refused" lines logged into logs, as
// JSON objects.
func refusalLines(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(logs.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", line)
		}
		if m["message"] == "teams: activity refused" {
			out = append(out, m)
		}
	}
	logs.Reset()
	return out
}

// TestRefusalsAreLoggedAtABoundedRate: the messaging endpoint is public,
// and every request without a good token is refused; the first few are
// logged as they come, a flood of them at a bounded rate, and the next
// line logged says how many were left out. Before, each one was a Warn
// line, so anyone could fill the log.
func TestRefusalsAreLoggedAtABoundedRate(t *testing.T) {
	var logs bytes.Buffer
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	a, err := New(nil, Options{AppID: "app", AppPassword: "secret", TenantID: "tenant", KV: struct{ core.Values }{},
		Now: func() time.Time { return now }, Log: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	const flood = 1000
	for range flood {
		w := httptest.NewRecorder()
		a.refused(w, errNoToken)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("a refusal answered %d", w.Code)
		}
	}
	first := refusalLines(t, &logs)
	if len(first) == 0 || len(first) > 20 {
		t.Fatalf("%d refusals at once logged %d lines; want the first few, at most 20", flood, len(first))
	}
	if first[0]["error"] != errNoToken.Error() || first[0]["level"] != "warn" {
		t.Fatalf("the first refusal logged %v", first[0])
	}
	now = now.Add(time.Minute)
	a.refused(httptest.NewRecorder(), errors.New("teams: bearer token: token has invalid audience"))
	next := refusalLines(t, &logs)
	if len(next) != 1 {
		t.Fatalf("a refusal a minute on logged %d lines; want 1", len(next))
	}
	if left, _ := next[0]["not_logged"].(float64); int(left) != flood-len(first) {
		t.Fatalf("the next line says %v were not logged; want %d: %v", next[0]["not_logged"], flood-len(first), next[0])
	}
	now = now.Add(time.Minute)
	a.refused(httptest.NewRecorder(), errNoToken)
	if last := refusalLines(t, &logs); len(last) != 1 || last[0]["not_logged"] != nil {
		t.Fatalf("a refusal after a quiet minute logged %v; want one line without a count", last)
	}
}
