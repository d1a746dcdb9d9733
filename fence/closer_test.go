package fence

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestResumeOpenings: the line after the preamble is worded from the
// closer and the parts' own deciders, exactly; names appear only in
// regions, and only where a person acted.
func TestResumeOpenings(t *testing.T) {
	yes, no := true, false
	h := strings.Repeat("d", 64)
	person := func(id, name string, ok *bool) CallOutcome {
		return CallOutcome{ToolCallID: id, Approved: ok, ArgumentsSHA256: h, DecidedBy: CloserPerson, Decider: name}
	}
	standing := func(id, grant string) CallOutcome {
		return CallOutcome{ToolCallID: id, Approved: &yes, ArgumentsSHA256: h, DecidedBy: CloserStanding, Decider: "Alice",
			Standing: &StandingNote{ID: grant, GrantedAt: "2026-01-01T10:00:00Z"}}
	}
	undecided := CallOutcome{ToolCallID: "c9", ArgumentsSHA256: h}
	calls := func(cs ...CallOutcome) Structured { return Structured{Calls: cs} }
	items := []ItemAnswer{{ItemID: "db", OptionID: "pg", DecidedBy: CloserPerson, Decider: "Dee"}}
	votes := []Vote{{Name: "Eve", Choice: "approve"}, {Name: "Fay", Choice: "deny"}}
	for _, tc := range []struct {
		name  string
		in    ResumeInput
		open  string
		names []string // the decider-name regions, in order
		more  []string // further trusted lines it must have
	}{
		{"person", ResumeInput{Verb: VerbAnswered, Closer: CloserPerson, DeciderName: "Bob", Body: "yes"},
			"A human answered this question.", []string{"Bob"}, []string{"The human's answer follows:"}},
		{"quorum", ResumeInput{Verb: VerbAnswered, Closer: CloserQuorum, Votes: votes, Structured: Structured{Approved: &no, ArgumentsSHA256: h}},
			"People voted on this question, and their votes settled it; every vote follows below.", []string{"Eve", "Fay"},
			[]string{"The voters denied the gated tool call: do not make it.", "This question needed several people to agree. 2 voted"}},
		{"standing", ResumeInput{Verb: VerbAnswered, Closer: CloserStanding, DeciderName: "Alice",
			Structured: Structured{Approved: &yes, ArgumentsSHA256: h, Standing: &StandingNote{ID: "st-1", GrantedAt: "2026-01-01T10:00:00Z"}}},
			"A standing approval answered this question at once; no human looked at this call.", []string{"Alice"},
			[]string{"The standing approval approved the gated tool call."}},
		{"policy", ResumeInput{Verb: VerbTimedOut, Closer: CloserPolicy, Structured: Structured{Approved: &yes}},
			"Nobody answered before the deadline.", nil,
			[]string{"No human closed it; the server did.", "No human approved the gated tool call; the question's policy allowed it when the question closed without an answer."}},
		{"rule allows", ResumeInput{Verb: VerbAnswered, Closer: CloserRule, Structured: Structured{Approved: &yes, ArgumentsSHA256: h}},
			"A policy rule of this server decided this question at once, when it was asked; no human looked at this call.", nil,
			[]string{"No human closed it; the server did, by a rule its operator configured.", "The policy rule allowed the gated tool call; no human approved it."}},
		{"rule denies", ResumeInput{Verb: VerbAnswered, Closer: CloserRule, Reason: "No network.", Structured: Structured{Approved: &no, ArgumentsSHA256: h}},
			"A policy rule of this server decided this question at once, when it was asked; no human looked at this call.", nil,
			[]string{"The policy rule denied the gated tool call: do not make it.", "The rule's reason, as the server's operator wrote it, follows:"}},
		{"timeout", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout},
			"Nobody answered before the deadline.", nil, []string{"No human closed it; the server did."}},
		{"timeout after an escalation", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout, Escalated: true},
			"Nobody answered before the deadline.", nil, []string{"It had been escalated to more deciders when its first deadline passed."}},
		{"timeout after re-asks", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout, Reasked: 2},
			"Nobody answered before the deadline.", nil, []string{"It had been asked again 2 times after its deadline passed."}},
		{"decline", ResumeInput{Verb: VerbDeclined, Closer: CloserDecline, DeciderName: "Carol"},
			"A human declined to answer this question.", []string{"Carol"}, nil},
		{"agent cancel", ResumeInput{Verb: VerbCancelled, Closer: CloserAgentCancel},
			"The asking agent withdrew this question; nobody answered it.", nil, []string{"No human closed it; the asking agent did."}},
		{"operator cancel", ResumeInput{Verb: VerbCancelled, Closer: CloserOperatorCancel, DeciderName: "Olga"},
			"An operator withdrew this question; nobody answered it.", []string{"Olga"}, nil},
		{"askbridge's own withdrawal", ResumeInput{Verb: VerbCancelled, Closer: CloserBridgeCancel, Reason: "no answer in time"},
			"askbridge itself withdrew this question; nobody answered it.", nil,
			[]string{"No human closed it, nor the asking agent; askbridge did.", "askbridge's own reason for withdrawing it follows:"}},
		{"expiry", ResumeInput{Verb: VerbExpired, Closer: CloserExpiry},
			"The run this question was bound to has ended, so the question expired; nobody answered it.", nil, []string{"No human closed it; the server did."}},

		{"batch: one standing approval for every call", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, Structured: calls(standing("c1", "st-1"), standing("c2", "st-1"))},
			"A standing approval decided every call of this batch at once; no human looked at them.", []string{"Alice", "Alice"},
			[]string{"A standing approval (id st-1) approved it at once, and no human looked at it; the untrusted display name of the person who granted it at 2026-01-01T10:00:00Z follows:"}},
		{"batch: two standing approvals", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, Structured: calls(standing("c1", "st-1"), standing("c2", "st-2"))},
			"Standing approvals decided every call of this batch at once; no human looked at them.", []string{"Alice", "Alice"}, nil},
		{"batch: one person", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, People: 1, Structured: calls(person("c1", "Bob", &yes), person("c2", "Bob", &no))},
			"A human decided every call of this batch; each call below names them.", []string{"Bob", "Bob"},
			[]string{"A human decided it; their untrusted display name follows:", "Denied: do not make this call."}},
		{"batch: two people", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, People: 2, Structured: calls(person("c1", "Bob", &yes), person("c2", "Carol", &yes))},
			"2 people decided the calls of this batch between them; each call below names who decided it.", []string{"Bob", "Carol"}, nil},
		{"batch: standing and a person", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, People: 1, Structured: calls(standing("c1", "st-1"), person("c2", "Bob", &yes), standing("c3", "st-1"))},
			"A standing approval decided 2 of the 3 calls of this batch at once, with no human looking at them; a human decided the other 1. Each call below says which.",
			[]string{"Alice", "Bob", "Alice"}, nil},
		{"form: one person", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, People: 1, Items: items},
			"A human answered every item of this form; each item below names them.", []string{"Dee"}, nil},
		{"form: two people", ResumeInput{Verb: VerbAnswered, Closer: CloserParts, People: 2, Items: append(slices.Clone(items), ItemAnswer{ItemID: "r", Text: "eu", DecidedBy: CloserPerson, Decider: "Gus"})},
			"2 people answered the items of this form between them; each item below names who answered it.", []string{"Dee", "Gus"}, nil},

		{"batch timed out after a call was decided", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout, Structured: calls(person("c1", "Bob", &yes), undecided)},
			"The deadline passed after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.", []string{"Bob"},
			[]string{"Not decided before the batch closed: do not make this call."}},
		{"batch declined after a call was decided", ResumeInput{Verb: VerbDeclined, Closer: CloserDecline, DeciderName: "Carol", Structured: calls(standing("c1", "st-1"), undecided)},
			"A human declined to answer this question after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.", []string{"Carol", "Alice"},
			[]string{"The human declined to decide the tool calls above that are not decided: make none of them."}},
		{"batch withdrawn by its agent", ResumeInput{Verb: VerbCancelled, Closer: CloserAgentCancel, Structured: calls(person("c1", "Bob", &no), undecided)},
			"The asking agent withdrew this question after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.", []string{"Bob"}, nil},
		{"batch withdrawn by an operator", ResumeInput{Verb: VerbCancelled, Closer: CloserOperatorCancel, DeciderName: "Olga", Structured: calls(person("c1", "Bob", &no), undecided)},
			"An operator withdrew this question after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.", []string{"Olga", "Bob"}, nil},
		{"batch withdrawn by askbridge", ResumeInput{Verb: VerbCancelled, Closer: CloserBridgeCancel, Structured: calls(person("c1", "Bob", &no), undecided)},
			"askbridge itself withdrew this question after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.", []string{"Bob"}, nil},
		{"batch expired", ResumeInput{Verb: VerbExpired, Closer: CloserExpiry, Structured: calls(person("c1", "Bob", &yes), undecided)},
			"The run this question was bound to ended after 1 of the 2 tool calls of this batch had been decided, so the question expired; nobody decided the rest.", []string{"Bob"}, nil},
		{"form timed out after an item", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout, Items: items},
			"The deadline passed after 1 of this form's items had been answered; the form has no answer as a whole.", []string{"Dee"}, nil},
		{"quorum timed out after votes", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout, Votes: votes},
			"The deadline passed after 2 people had voted; their votes did not settle it.", []string{"Eve", "Fay"}, nil},

		{"one call, decided by a person", ResumeInput{Verb: VerbAnswered, Closer: CloserPerson, DeciderName: "Bob", Structured: Structured{ToolCallID: "c1", Approved: &yes, ArgumentsSHA256: h}},
			"A human answered this question.", []string{"Bob"}, []string{"This result is for one tool call of a batch; the tool call's id follows:"}},
		{"one call, undecided at the deadline", ResumeInput{Verb: VerbTimedOut, Closer: CloserTimeout, Structured: Structured{ToolCallID: "c1", Undecided: true}},
			"Nobody decided this tool call before the deadline.", nil, []string{"This tool call was not decided before the deadline: do not make it."}},
		{"one call, undecided at a decline", ResumeInput{Verb: VerbDeclined, Closer: CloserDecline, DeciderName: "Carol", Structured: Structured{ToolCallID: "c1", Undecided: true}},
			"A human declined to decide this batch before this tool call was decided.", []string{"Carol"}, nil},
		{"one call, undecided at the agent's cancel", ResumeInput{Verb: VerbCancelled, Closer: CloserAgentCancel, Structured: Structured{ToolCallID: "c1", Undecided: true}},
			"The asking agent withdrew this batch before this tool call was decided.", nil, nil},
		{"one call, undecided at an operator's cancel", ResumeInput{Verb: VerbCancelled, Closer: CloserOperatorCancel, DeciderName: "Olga", Structured: Structured{ToolCallID: "c1", Undecided: true}},
			"An operator withdrew this batch before this tool call was decided.", []string{"Olga"}, nil},
		{"one call, undecided at askbridge's withdrawal", ResumeInput{Verb: VerbCancelled, Closer: CloserBridgeCancel, Structured: Structured{ToolCallID: "c1", Undecided: true}},
			"askbridge itself withdrew this batch before this tool call was decided.", nil, nil},
		{"one call, undecided at the run's end", ResumeInput{Verb: VerbExpired, Closer: CloserExpiry, Structured: Structured{ToolCallID: "c1", Undecided: true}},
			"The run this batch was bound to has ended, so it expired before this tool call was decided.", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.QuestionID = testID
			p := checkResume(t, tc.in)
			if len(p.Lines) < 2 || p.Lines[1] != tc.open {
				t.Fatalf("opening %q, want %q\n%s", p.Lines[1], tc.open, strings.Join(p.Lines, "\n"))
			}
			var names []string
			for _, r := range p.Regions {
				if r.Tag == TagDeciderName {
					names = append(names, r.Content)
				}
			}
			if !slices.Equal(names, tc.names) {
				t.Errorf("names %q, want %q", names, tc.names)
			}
			text := strings.Join(p.Lines, "\n")
			for _, w := range tc.more {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in\n%s", w, text)
				}
			}
			// Nobody is said to have answered where a person did not,
			// and no human is said to have looked at what a standing
			// approval decided.
			if !tc.in.Closer.named() && tc.in.Closer != CloserQuorum && strings.Contains(text, "A human answered this question") {
				t.Errorf("a %s close reads as a human's answer:\n%s", tc.in.Closer, text)
			}
		})
	}
}

// TestEveryCloserHasWords: each closer has its verb and its opening, so
// a closer added later cannot fall through to no words.
func TestEveryCloserHasWords(t *testing.T) {
	for _, c := range Closers() {
		if !c.Verb().Valid() {
			t.Errorf("closer %s has no verb", c)
		}
		switch c {
		case CloserPerson, CloserQuorum, CloserStanding, CloserParts, CloserRule: // each closes with a decision, worded by its own opening
		default:
			if unanswered[c].alone == "" || unanswered[c].after == "" {
				t.Errorf("closer %s has no words for a close without an answer", c)
			}
			if undecidedCall[c] == "" {
				t.Errorf("closer %s has no words for an undecided call", c)
			}
		}
	}
}

// TestBridgeCancelRefusesWhatItCannotWord: askbridge's own withdrawal
// names nobody (no person acted) and approves nothing, and is a
// withdrawal, never an answer.
func TestBridgeCancelRefusesWhatItCannotWord(t *testing.T) {
	yes := true
	for name, in := range map[string]ResumeInput{
		"a name":        {Verb: VerbCancelled, Closer: CloserBridgeCancel, DeciderName: "Alice"},
		"an approval":   {Verb: VerbCancelled, Closer: CloserBridgeCancel, Structured: Structured{Approved: &yes}},
		"another verb":  {Verb: VerbTimedOut, Closer: CloserBridgeCancel},
		"a standing id": {Verb: VerbCancelled, Closer: CloserBridgeCancel, Structured: Structured{Standing: &StandingNote{ID: "st-1", GrantedAt: "x"}}},
	} {
		in.QuestionID = testID
		if _, err := BuildResume(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestRuleCloserRefusesWhatItCannotWord: a policy rule decides one tool
// call at the ask, as itself: no name, no edit, no calls, no other verb.
func TestRuleCloserRefusesWhatItCannotWord(t *testing.T) {
	yes := true
	for name, in := range map[string]ResumeInput{
		"no approval":   {Verb: VerbAnswered, Closer: CloserRule, Body: "an answer"},
		"a name":        {Verb: VerbAnswered, Closer: CloserRule, DeciderName: "Alice", Structured: Structured{Approved: &yes}},
		"another verb":  {Verb: VerbTimedOut, Closer: CloserRule, Structured: Structured{Approved: &yes}},
		"a batch":       {Verb: VerbAnswered, Closer: CloserRule, Structured: Structured{Approved: &yes, Calls: []CallOutcome{{ToolCallID: "c1"}}}},
		"a standing id": {Verb: VerbAnswered, Closer: CloserRule, Structured: Structured{Approved: &yes, Standing: &StandingNote{ID: "st-1", GrantedAt: "x"}}},
	} {
		in.QuestionID = testID
		if _, err := BuildResume(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
