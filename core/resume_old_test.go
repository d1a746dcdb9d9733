package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// oldRecord reads a question as the previous version stored it: its
// resolution has no closed_by.
func oldRecord(t *testing.T, raw string) *core.Question {
	t.Helper()
	var q core.Question
	if err := json.Unmarshal([]byte(raw), &q); err != nil {
		t.Fatal(err)
	}
	return &q
}

const oldCalls = `"calls":[
 {"tool_call_id":"c1","tool":"w","arguments":{},"arguments_sha256":"` + hashA + `"},
 {"tool_call_id":"c2","tool":"w","arguments":{},"arguments_sha256":"` + hashA + `"}]`

const hashA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// TestOldBatchRecordsResumeHonestly: the two resumes the issue found
// wrong, on records written before the closer was recorded.
func TestOldBatchRecordsResumeHonestly(t *testing.T) {
	standing := `{"id":"q1","kind":"approval","state":"answered",` + oldCalls + `,
	 "answers":[
	  {"item_id":"c1","option_id":"approve","standing":{"id":"st-1","granted_by":{"surface":"slack","id":"U1","name":"Alice"},"granted_at":"2026-01-01T10:00:00Z"},"decider":{"surface":"slack","id":"U1","name":"standing approval by Alice"},"at":"2026-01-02T10:00:00Z"},
	  {"item_id":"c2","option_id":"approve","standing":{"id":"st-1","granted_by":{"surface":"slack","id":"U1","name":"Alice"},"granted_at":"2026-01-01T10:00:00Z"},"decider":{"surface":"slack","id":"U1","name":"standing approval by Alice"},"at":"2026-01-02T10:00:00Z"}],
	 "resolution":{"state":"answered","decider":{"surface":"slack","id":"U1","name":"standing approval by Alice"},"at":"2026-01-02T10:00:00Z"}}`
	r, err := core.ResumeOf(oldRecord(t, standing))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Text, "A human answered") || !strings.Contains(r.Text, "A standing approval decided every call of this batch at once; no human looked at them.") {
		t.Fatalf("a batch every call of which a standing approval covered:\n%s", r.Text)
	}

	timedOut := `{"id":"q2","kind":"approval","state":"timed_out",` + oldCalls + `,
	 "answers":[{"item_id":"c1","option_id":"approve","decider":{"surface":"slack","id":"U2","name":"Bob"},"at":"2026-01-02T10:00:00Z"}],
	 "resolution":{"state":"timed_out","decider":{"surface":"system","id":"askbridge","name":"askbridge"},"at":"2026-01-02T11:00:00Z","reason":"nobody answered before the deadline"}}`
	r, err = core.ResumeOf(oldRecord(t, timedOut))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Text, "Nobody answered") || !strings.Contains(r.Text, "The deadline passed after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.") {
		t.Fatalf("a batch that timed out after a person approved one call:\n%s", r.Text)
	}
}

// TestCloserOfOldRecords: a resolution stored without closed_by reads
// its closer from its other fields, in CloserOf alone; a recorded one is
// taken as recorded.
func TestCloserOfOldRecords(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      core.Closer
	}{
		{"an answer", `{"kind":"clarification","state":"answered","resolution":{"state":"answered","decider":{"surface":"slack","id":"U1"}}}`, core.CloserPerson},
		{"a standing approval", `{"kind":"approval","state":"answered","resolution":{"state":"answered","decider":{"surface":"slack","id":"U1"},"approved":true,
			"standing":{"id":"st-1","granted_by":{"surface":"slack","id":"U1"},"granted_at":"2026-01-01T10:00:00Z"}}}`, core.CloserStanding},
		{"a quorum", `{"kind":"approval","state":"answered","quorum":2,"resolution":{"state":"answered","decider":{"surface":"slack","id":"U1"},"approved":true}}`, core.CloserQuorum},
		{"a form", `{"kind":"form","state":"answered","resolution":{"state":"answered","decider":{"surface":"slack","id":"U1"}}}`, core.CloserParts},
		{"a batch", `{"kind":"approval","state":"answered",` + oldCalls + `,"answers":[
			{"item_id":"c1","option_id":"deny","decider":{"surface":"slack","id":"U1"}},{"item_id":"c2","option_id":"approve","decider":{"surface":"slack","id":"U2"}}],
			"resolution":{"state":"answered","decider":{"surface":"slack","id":"U2"}}}`, core.CloserParts},
		{"a decline", `{"kind":"clarification","state":"declined","resolution":{"state":"declined","decider":{"surface":"slack","id":"U1"}}}`, core.CloserDecline},
		{"a timeout", `{"kind":"clarification","state":"timed_out","resolution":{"state":"timed_out","decider":{"surface":"system","id":"askbridge"}}}`, core.CloserTimeout},
		{"an expiry", `{"kind":"clarification","state":"expired","resolution":{"state":"expired","decider":{"surface":"system","id":"askbridge"}}}`, core.CloserExpiry},
		{"the agent's cancel", `{"kind":"clarification","state":"cancelled","resolution":{"state":"cancelled","decider":{"surface":"agent","id":"bot"}}}`, core.CloserAgentCancel},
		{"an operator's cancel", `{"kind":"clarification","state":"cancelled","resolution":{"state":"cancelled","decider":{"surface":"api","id":"ops"}}}`, core.CloserOperatorCancel},
		{"recorded", `{"kind":"approval","state":"answered","quorum":2,"resolution":{"state":"answered","closed_by":"person","decider":{"surface":"slack","id":"U1"}}}`, core.CloserPerson},
		{"open", `{"kind":"clarification","state":"open"}`, ""},
	} {
		q := oldRecord(t, tc.raw)
		q.ID = "q1"
		if got := core.CloserOf(q); got != tc.want {
			t.Errorf("%s: closer %q, want %q", tc.name, got, tc.want)
		}
		if q.Resolution == nil {
			continue
		}
		if _, err := core.ResumeOf(q); err != nil {
			t.Errorf("%s: the old record does not resume: %v", tc.name, err)
		}
	}
}

func TestParseCloser(t *testing.T) {
	for _, c := range []core.Closer{core.CloserPerson, core.CloserQuorum, core.CloserStanding, core.CloserParts, core.CloserTimeout,
		core.CloserDecline, core.CloserAgentCancel, core.CloserOperatorCancel, core.CloserExpiry, core.CloserPolicy} {
		if got, err := core.ParseCloser(c.String()); got != c || err != nil {
			t.Errorf("ParseCloser(%q) = %q, %v", c, got, err)
		}
	}
	for _, s := range []string{"", "Person", "rule", "admin"} {
		if _, err := core.ParseCloser(s); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("ParseCloser(%q): %v, want invalid", s, err)
		}
	}
}
