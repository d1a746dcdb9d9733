package core_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence"
)

var (
	closeAt  = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	alice    = core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: "Alice", Person: "alice"}
	aliceTg  = core.Decider{Surface: core.SurfaceTelegram, ID: "42", Name: "Alice on Telegram", Person: "alice"}
	bob      = core.Decider{Surface: core.SurfaceSlack, ID: "U2", Name: "Bob", Person: "bob"}
	carol    = core.Decider{Surface: core.SurfaceDiscord, ID: "D3", Name: "Carol"}
	olga     = core.Decider{Surface: core.SurfaceConsole, ID: "olga", Name: "Olga"}
	deployer = core.Decider{Surface: core.SurfaceAgent, ID: "deploy-bot", Name: "deploy-bot"}
	grant    = &core.StandingUse{ID: "st-1", GrantedBy: alice, GrantedAt: closeAt.Add(-time.Hour)}
	hashB    = strings.Repeat("b", 64)
)

// kinds builds an open question of each kind the table covers.
var kinds = map[string]func() *core.Question{
	"clarification": func() *core.Question {
		return &core.Question{Kind: core.KindClarification, Text: "Which region?"}
	},
	"decision": func() *core.Question {
		return &core.Question{Kind: core.KindDecision, Options: []core.Option{
			{ID: "pg", Title: "Postgres", Writeup: "boring", Recommended: true}, {ID: "ddb", Title: "DynamoDB", Writeup: "scales"}}}
	},
	"approval": func() *core.Question {
		return &core.Question{Kind: core.KindApproval, Call: &core.ToolCall{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`), ArgumentsSHA256: hashA}}
	},
	"approval with edit": func() *core.Question {
		return &core.Question{Kind: core.KindApproval, Call: &core.ToolCall{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`), ArgumentsSHA256: hashA,
			Editable: &core.Editable{All: true}}}
	},
	"form": func() *core.Question {
		opts := []core.FormOption{{ID: "x", Label: "X"}, {ID: "y", Label: "Y"}}
		return &core.Question{Kind: core.KindForm, Items: []core.FormItem{{ID: "i1", Question: "One?", Options: opts}, {ID: "i2", Question: "Two?", Options: opts}}}
	},
	"batch": func() *core.Question {
		return &core.Question{Kind: core.KindApproval, Calls: []core.BatchCall{
			{ToolCallID: "c1", ToolCall: core.ToolCall{Tool: "w", Arguments: json.RawMessage(`{}`), ArgumentsSHA256: hashA}},
			{ToolCallID: "c2", ToolCall: core.ToolCall{Tool: "w", Arguments: json.RawMessage(`{}`), ArgumentsSHA256: hashA}}}}
	},
}

var (
	whole   = []string{"clarification", "decision", "approval", "approval with edit"}
	voted   = []string{"decision", "approval", "approval with edit"}
	inParts = []string{"form", "batch"}
	every   = append(slices.Clone(whole), inParts...)
)

// closeAs closes q as state, closed by, as d, at closeAt.
func closeAs(q *core.Question, state core.State, by core.Closer, d core.Decider) *core.Resolution {
	q.State = state
	q.Resolution = &core.Resolution{State: state, ClosedBy: by, Decider: d, At: closeAt}
	return q.Resolution
}

// decide records what a person (or a vote's winner) chose, as the kind
// takes it.
func decide(q *core.Question, r *core.Resolution) {
	yes := true
	switch {
	case q.Kind == core.KindClarification:
		r.Answer = "eu-west"
	case q.Kind == core.KindDecision:
		r.OptionID, r.Answer = "ddb", "scales"
	case q.Call != nil:
		r.Approved, r.ArgumentsSHA256 = &yes, q.Call.ArgumentsSHA256
		if q.Call.Editable != nil {
			r.Edit = &core.ArgumentEdit{Arguments: json.RawMessage(`{"env":"staging"}`), ArgumentsSHA256: hashB,
				AskedArgumentsSHA256: hashA, Changes: []core.KeyChange{{Key: "env", Change: core.KeyChanged}}}
			r.ArgumentsSHA256 = hashB
		}
	}
}

// part records part i of a form or batch as decided by d (a standing
// approval when st is set).
func part(q *core.Question, i int, d core.Decider, st *core.StandingUse) {
	a := core.ItemAnswer{Decider: d, At: closeAt, Standing: st}
	if q.IsBatch() {
		a.ItemID, a.OptionID = q.Calls[i].ToolCallID, core.ApproveOption
	} else {
		a.ItemID, a.OptionID = q.Items[i].ID, "x"
	}
	q.Answers = append(q.Answers, a)
}

func vote(q *core.Question, d core.Decider, choice string) {
	key := "person:" + d.Person
	q.Votes = append(q.Votes, core.Vote{Key: key, Choice: choice, Decider: d, At: closeAt})
}

// choice is the option a vote for the kind's outcome picks.
func choice(q *core.Question) string {
	if q.Kind == core.KindDecision {
		return "ddb"
	}
	return core.ApproveOption
}

func timeout(policy core.TimeoutPolicy, renotified int) func(*core.Question) {
	return func(q *core.Question) {
		q.OnTimeout, q.Renotified = policy, renotified
		closeAs(q, core.StateTimedOut, core.CloserTimeout, core.System).Reason = core.TimeoutReason
	}
}

// TestResumeClosers: every kind against every closer that applies to it.
// The opening says who or what closed the question, as recorded; a name
// appears (fenced) exactly where a person acted, and never where nobody
// did.
func TestResumeClosers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kinds []string
		close func(q *core.Question)
		open  map[string]string // by kind; "" for every kind
		names []string          // decider-name regions, in order
		more  []string
	}{
		{
			name: "a person", kinds: whole,
			close: func(q *core.Question) { decide(q, closeAs(q, core.StateAnswered, core.CloserPerson, alice)) },
			open:  map[string]string{"": "A human answered this question."}, names: []string{"Alice"},
		},
		{
			name: "a quorum of people", kinds: voted,
			close: func(q *core.Question) {
				q.Quorum = 2
				vote(q, alice, choice(q))
				vote(q, bob, choice(q))
				decide(q, closeAs(q, core.StateAnswered, core.CloserQuorum, bob))
			},
			open:  map[string]string{"": "People voted on this question, and their votes settled it; every vote follows below."},
			names: []string{"Alice", "Bob"}, more: []string{"2 voted"},
		},
		{
			name: "a standing approval", kinds: []string{"approval"},
			close: func(q *core.Question) {
				r := closeAs(q, core.StateAnswered, core.CloserStanding, core.Decider{Surface: alice.Surface, ID: alice.ID, Name: "standing approval by Alice"})
				decide(q, r)
				r.Standing = grant
			},
			open:  map[string]string{"": "A standing approval answered this question at once; no human looked at this call."},
			names: []string{"Alice"}, more: []string{"The standing approval approved the gated tool call."},
		},
		{
			name: "one person, part by part, from two accounts", kinds: inParts,
			close: func(q *core.Question) {
				part(q, 0, alice, nil)
				part(q, 1, aliceTg, nil)
				closeAs(q, core.StateAnswered, core.CloserParts, aliceTg)
			},
			open: map[string]string{
				"form":  "A human answered every item of this form; each item below names them.",
				"batch": "A human decided every call of this batch; each call below names them.",
			},
			names: []string{"Alice", "Alice on Telegram"},
		},
		{
			name: "two people, part by part", kinds: inParts,
			close: func(q *core.Question) {
				part(q, 0, alice, nil)
				part(q, 1, bob, nil)
				closeAs(q, core.StateAnswered, core.CloserParts, bob)
			},
			open: map[string]string{
				"form":  "2 people answered the items of this form between them; each item below names who answered it.",
				"batch": "2 people decided the calls of this batch between them; each call below names who decided it.",
			},
			names: []string{"Alice", "Bob"},
		},
		{
			name: "a standing approval for every call", kinds: []string{"batch"},
			close: func(q *core.Question) {
				label := core.Decider{Surface: alice.Surface, ID: alice.ID, Name: "standing approval by Alice"}
				part(q, 0, label, grant)
				part(q, 1, label, grant)
				closeAs(q, core.StateAnswered, core.CloserParts, label)
			},
			open:  map[string]string{"": "A standing approval decided every call of this batch at once; no human looked at them."},
			names: []string{"Alice", "Alice"},
		},
		{
			name: "a standing approval and a person", kinds: []string{"batch"},
			close: func(q *core.Question) {
				part(q, 0, core.Decider{Surface: alice.Surface, ID: alice.ID, Name: "standing approval by Alice"}, grant)
				part(q, 1, bob, nil)
				closeAs(q, core.StateAnswered, core.CloserParts, bob)
			},
			open:  map[string]string{"": "A standing approval decided 1 of the 2 calls of this batch at once, with no human looking at them; a human decided the other 1. Each call below says which."},
			names: []string{"Alice", "Bob"},
		},
		{
			name: "a timeout (deny)", kinds: every, close: timeout(core.OnTimeoutDeny, 0),
			open: map[string]string{"": "Nobody answered before the deadline."}, more: []string{"No human closed it; the server did."},
		},
		{
			name: "a timeout after an escalation", kinds: every, close: timeout(core.OnTimeoutEscalate, 1),
			open: map[string]string{"": "Nobody answered before the deadline."},
			more: []string{"It had been escalated to more deciders when its first deadline passed."},
		},
		{
			name: "a timeout after re-asks", kinds: every, close: timeout(core.OnTimeoutReask, 2),
			open: map[string]string{"": "Nobody answered before the deadline."},
			more: []string{"It had been asked again 2 times after its deadline passed."},
		},
		{
			name: "a timeout after one part", kinds: inParts,
			close: func(q *core.Question) {
				part(q, 0, bob, nil)
				timeout(core.OnTimeoutDeny, 0)(q)
			},
			open: map[string]string{
				"form":  "The deadline passed after 1 of this form's items had been answered; the form has no answer as a whole.",
				"batch": "The deadline passed after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest.",
			},
			names: []string{"Bob"},
		},
		{
			name: "a timeout after one vote", kinds: voted,
			close: func(q *core.Question) {
				q.Quorum = 2
				vote(q, alice, choice(q))
				timeout(core.OnTimeoutDeny, 0)(q)
			},
			open:  map[string]string{"": "The deadline passed after 1 person had voted; their votes did not settle it."},
			names: []string{"Alice"},
		},
		{
			name: "a decline", kinds: every,
			close: func(q *core.Question) {
				closeAs(q, core.StateDeclined, core.CloserDecline, carol).Reason = core.DeclineReason
			},
			open: map[string]string{"": "A human declined to answer this question."}, names: []string{"Carol"},
		},
		{
			name: "a decline after one part", kinds: []string{"batch"},
			close: func(q *core.Question) {
				part(q, 0, bob, nil)
				closeAs(q, core.StateDeclined, core.CloserDecline, carol)
			},
			open:  map[string]string{"": "A human declined to answer this question after 1 of the 2 tool calls of this batch had been decided; nobody decided the rest."},
			names: []string{"Carol", "Bob"},
		},
		{
			name: "a cancel by the agent", kinds: every,
			close: func(q *core.Question) {
				closeAs(q, core.StateCancelled, core.CloserAgentCancel, deployer).Reason = "found it in the docs"
			},
			open: map[string]string{"": "The asking agent withdrew this question; nobody answered it."},
			more: []string{"No human closed it; the asking agent did."},
		},
		{
			name: "a cancel by an operator", kinds: every,
			close: func(q *core.Question) { closeAs(q, core.StateCancelled, core.CloserOperatorCancel, olga) },
			open:  map[string]string{"": "An operator withdrew this question; nobody answered it."}, names: []string{"Olga"},
		},
		{
			name: "an expiry", kinds: every,
			close: func(q *core.Question) {
				closeAs(q, core.StateExpired, core.CloserExpiry, core.System).Reason = core.ExpiredReason
			},
			open: map[string]string{"": "The run this question was bound to has ended, so the question expired; nobody answered it."},
		},
	} {
		for _, kind := range tc.kinds {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				q := kinds[kind]()
				q.ID = core.QuestionID("q-" + strings.ReplaceAll(kind, " ", "-"))
				tc.close(q)
				r, err := core.ResumeOf(q)
				if err != nil {
					t.Fatal(err)
				}
				p := parse(t, r.Text)
				if p.Verb.String() != strings.ToUpper(string(q.State)) {
					t.Errorf("verb %s for a question %s", p.Verb, q.State)
				}
				open := tc.open[kind]
				if open == "" {
					open = tc.open[""]
				}
				if p.Lines[1] != open {
					t.Errorf("opening %q, want %q\n%s", p.Lines[1], open, r.Text)
				}
				if got := names(p); !slices.Equal(got, tc.names) {
					t.Errorf("names %q, want %q\n%s", got, tc.names, r.Text)
				}
				text := strings.Join(p.Lines, "\n")
				for _, w := range tc.more {
					if !strings.Contains(text, w) {
						t.Errorf("missing %q in\n%s", w, r.Text)
					}
				}
				if core.CloserOf(q) != core.CloserPerson && strings.Contains(text, "A human answered this question.") {
					t.Errorf("a close by %s reads as a human's answer:\n%s", core.CloserOf(q), r.Text)
				}
				if q.IsBatch() {
					checkCallResults(t, q)
				}
			})
		}
	}
}

// checkCallResults: each call's own result says who decided that call,
// and an undecided one how the batch closed, naming only who acted.
func checkCallResults(t *testing.T, q *core.Question) {
	t.Helper()
	results, err := core.CallResultsOf(q)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		p := parse(t, res.Resume.Text)
		a, decided := q.Answered(q.Calls[i].ToolCallID)
		var open string
		var want []string
		switch {
		case decided && a.Standing != nil:
			open, want = "A standing approval answered this question at once; no human looked at this call.", []string{core.DeciderLabel(a.Standing.GrantedBy)}
		case decided:
			open, want = "A human answered this question.", []string{core.DeciderLabel(a.Decider)}
		default:
			if strings.Contains(res.Resume.Text, "A human answered") || !res.Resume.Structured.Undecided {
				t.Errorf("call %d, undecided, reads as answered:\n%s", i, res.Resume.Text)
			}
			if r := q.Resolution; r.ClosedBy == core.CloserDecline || r.ClosedBy == core.CloserOperatorCancel {
				want = []string{core.DeciderLabel(r.Decider)}
			}
		}
		if open != "" && p.Lines[1] != open {
			t.Errorf("call %d opens %q, want %q", i, p.Lines[1], open)
		}
		if got := names(p); !slices.Equal(got, want) {
			t.Errorf("call %d names %q, want %q\n%s", i, got, want, res.Resume.Text)
		}
	}
}

func parse(t *testing.T, text string) fence.ParsedResume {
	t.Helper()
	p, err := fence.ParseResume(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return p
}

// names are the display names a resume fences, in order.
func names(p fence.ParsedResume) []string {
	var out []string
	for _, r := range p.Regions {
		if r.Tag == fence.TagDeciderName {
			out = append(out, r.Content)
		}
	}
	return out
}
