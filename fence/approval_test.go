package fence

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestApprovalNotApprovedSaysDoNotMakeIt: a gated call's resume that does
// not approve it says so in a trusted line, whatever closed it, with or
// without votes or a reason, and so does an answer whose record lost its
// verdict; one that approves it never does. A decline of one lets the
// agent go on without the call, never "proceed" alone.
func TestApprovalNotApprovedSaysDoNotMakeIt(t *testing.T) {
	yes, no := true, false
	h := strings.Repeat("e", 64)
	note := &StandingNote{ID: "st-1", GrantedAt: "2026-01-01T10:00:00Z"}
	for _, c := range Closers() {
		for _, verdict := range []*bool{nil, &yes, &no} {
			in := ResumeInput{QuestionID: testID, Verb: c.Verb(), Closer: c, Approval: true,
				Structured: Structured{Approved: verdict}}
			switch {
			case c == CloserParts:
				continue // a single call is never answered in parts
			case verdict != nil && *verdict && !approves(c), c == CloserStanding && (verdict == nil || !*verdict), c == CloserRule && verdict == nil:
				continue // closers that cannot approve, a standing approval that does not, a rule that decides nothing
			case verdict == nil && c == CloserTimeout:
				// A quorum one vote short: a fenced "approve" is no verdict.
				in.Votes, in.Reason = []Vote{{Name: "Bob", Choice: "approve", Text: "fine by me"}}, "1 of 2 approvals: Bob"
			}
			if verdict != nil {
				in.Structured.ArgumentsSHA256 = h
			}
			if c.named() {
				in.DeciderName = "Alice"
			}
			if c == CloserStanding {
				in.Structured.Standing = note
			}
			p := checkResume(t, in)
			said := slices.Contains(p.Lines, string(notApproved)) || slices.ContainsFunc(p.Lines, func(l string) bool {
				return strings.HasSuffix(l, "denied the gated tool call: do not make it.")
			})
			if approved := verdict != nil && *verdict; said == approved {
				t.Errorf("%s, approved %v: says not to make the call: %v\n%s", c, approved, said, strings.Join(p.Lines, "\n"))
			}
			for _, r := range p.Regions {
				if r.Tag == TagDecline {
					t.Errorf("%s: a gated call's resume holds the fixed decline text, which tells the agent to proceed", c)
				}
			}
			if in.Verb == VerbDeclined && !slices.ContainsFunc(p.Lines, func(l string) bool { return strings.HasPrefix(l, "Go on without that tool call") }) {
				t.Errorf("a declined gated call does not tell the agent to go on without it:\n%s", strings.Join(p.Lines, "\n"))
			}
		}
	}
}

// TestApprovalOnABatchIsInvalid: Approval is one gated call's, so a
// resume that sets it beside a batch's calls, one call's result or an
// undecided call is refused as invalid: those word their own outcomes.
func TestApprovalOnABatchIsInvalid(t *testing.T) {
	yes := true
	for name, in := range map[string]ResumeInput{
		"a batch":           {Verb: VerbTimedOut, Closer: CloserTimeout, Structured: Structured{Calls: []CallOutcome{{ToolCallID: "c1"}}}},
		"one call's result": {Verb: VerbAnswered, Closer: CloserPerson, DeciderName: "A", Structured: Structured{ToolCallID: "c1", Approved: &yes}},
		"an undecided call": {Verb: VerbTimedOut, Closer: CloserTimeout, Structured: Structured{Undecided: true}},
	} {
		in.QuestionID, in.Approval = testID, true
		if _, err := BuildResume(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}
