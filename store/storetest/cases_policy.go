package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/fence"
)

func init() {
	registerDomain("PolicyRulesDecideAtTheAsk", testPolicyRules)
}

// guardedRules are the "guarded" route's policy rules, in order.
func guardedRules() []core.Rule {
	return []core.Rule{
		{Name: "reads", When: `tool == "read_file" || tool == "grep"`, Decide: core.DecideAllow},
		{When: `tool == "fetch"`, Decide: core.DecideDeny, Reason: "No network access from this repository."},
		{Name: "destructive", When: `tool == "shell" && args.command.matches("rm -rf|git push --force")`,
			Route: "two", Reversibility: core.HardToReverse, Timeout: 2 * time.Hour},
		{When: `tool == "shell" && args.command.startsWith("git status")`, Decide: core.DecideAllow},
		{When: `tool == "odd" && args.mode == "fast"`, Decide: core.DecideDeny},
		{When: `tool == "odd" || labels.project == "sandbox"`, Decide: core.DecideAllow},
	}
}

func guardedCall(tool, args string) core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", ToolCallID: nextCall(), Route: "guarded",
		Text: "Run it?", Reversibility: core.Reversible, Tool: tool, Arguments: json.RawMessage(args)}
}

// testPolicyRules asks approvals on a route with rules: the first rule
// whose condition holds decides. allow and deny close the question at
// the ask, through the chokepoint, recorded with the rule and the
// policy closer, posting nothing, and the resume says no person looked;
// ask reshapes the question; no match, or a rule that cannot be
// evaluated, asks as configured. All of it survives a restart.
func testPolicyRules(t *testing.T, h Harness) {
	e := newEnv(t, h)
	// guarded has the rules; it posts to Slack, so an ask a rule closes
	// is seen to post nothing.
	e.extra = map[string]core.Route{"guarded": {
		Rooms:    []core.Room{{Surface: core.SurfaceSlack, ID: "C7"}},
		Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}},
		Rules:    guardedRules(),
	}}
	e.svc = e.service()
	type want struct {
		open     bool
		approved bool
		rule     int // -1: none
		route    string
		rev      core.Reversibility
		quorum   int
		timeout  time.Duration
		opening  string // the resume's first line after the preamble
		verdict  string
	}
	closedLine := "A policy rule of this server decided this question at once, when it was asked; no human looked at this call."
	cases := []struct {
		name string
		in   core.AskInput
		want want
	}{
		{"allow", guardedCall("read_file", `{"path":"README.md"}`),
			want{approved: true, rule: 0, opening: closedLine, verdict: "The policy rule allowed the gated tool call; no human approved it."}},
		{"deny with the rule's reason", guardedCall("fetch", `{"url":"https://example.com"}`),
			want{rule: 1, opening: closedLine, verdict: "The policy rule denied the gated tool call: do not make it."}},
		{"ask on another route, hard to reverse, with a timeout", guardedCall("shell", `{"command":"rm -rf build"}`),
			want{open: true, rule: 2, route: "two", rev: core.HardToReverse, quorum: 2, timeout: 2 * time.Hour}},
		{"first match wins", guardedCall("shell", `{"command":"git status && git push --force"}`),
			want{open: true, rule: 2, route: "two", rev: core.HardToReverse, quorum: 2, timeout: 2 * time.Hour}},
		{"a later rule when the earlier do not hold", guardedCall("shell", `{"command":"git status --short"}`),
			want{approved: true, rule: 3, opening: closedLine, verdict: "The policy rule allowed the gated tool call; no human approved it."}},
		{"no rule matches", guardedCall("shell", `{"command":"make test"}`),
			want{open: true, rule: -1, route: "guarded", rev: core.Reversible, timeout: core.DefaultTimeout}},
		// args has no mode: rule 4 cannot be evaluated, so rule 5, which
		// would allow it, is never reached.
		{"a rule that cannot be evaluated asks as configured", guardedCall("odd", `{}`),
			want{open: true, rule: -1, route: "guarded", rev: core.Reversible, timeout: core.DefaultTimeout}},
	}
	ids := map[string]core.QuestionID{}
	e.claimAll(core.SurfaceSlack, "c")
	for _, c := range cases {
		q := e.ask(c.in)
		ids[c.name] = q.ID
		posted := e.claimAll(core.SurfaceSlack, "c")
		if !c.want.open && len(posted) != 0 {
			t.Errorf("%s: a question a rule closed posted %d cards", c.name, len(posted))
		}
		if c.want.open && c.want.route == "guarded" && len(posted) != 1 {
			t.Errorf("%s: an asked question posted %d cards to the route's room, want 1", c.name, len(posted))
		}
	}
	e.restart()
	for _, c := range cases {
		q, w := e.get(ids[c.name]), c.want
		switch {
		case w.rule < 0 && q.Rule != nil:
			t.Errorf("%s: recorded rule %+v, want none", c.name, q.Rule)
		case w.rule >= 0 && (q.Rule == nil || q.Rule.Index != w.rule || q.Rule.Route != "guarded"):
			t.Errorf("%s: recorded rule %+v, want guarded[%d]", c.name, q.Rule, w.rule)
		}
		evs := e.events(q.ID)
		if w.open {
			if q.State != core.StateOpen || q.Route != w.route || q.Reversibility != w.rev || q.Quorum != w.quorum ||
				q.Deadline.Sub(q.CreatedAt) != w.timeout {
				t.Errorf("%s: %s on %s, %s, quorum %d, deadline in %s; want open on %s, %s, quorum %d, in %s", c.name,
					q.State, q.Route, q.Reversibility, q.Quorum, q.Deadline.Sub(q.CreatedAt), w.route, w.rev, w.quorum, w.timeout)
			}
			if w.rule >= 0 && !strings.Contains(evs[0].Reason, q.Rule.Label()+" matched: asked with route two") {
				t.Errorf("%s: asked event %q does not name the rule", c.name, evs[0].Reason)
			}
			continue
		}
		r := q.Resolution
		if q.State != core.StateAnswered || r == nil || r.ClosedBy != core.CloserPolicy || core.CloserOf(q) != core.CloserPolicy ||
			r.Approved == nil || *r.Approved != w.approved || r.Policy == nil || *r.Policy != *q.Rule ||
			r.ArgumentsSHA256 != q.Call.ArgumentsSHA256 {
			t.Errorf("%s: closed %s by %+v, want answered by the policy rule, approved %v", c.name, q.State, r, w.approved)
			continue
		}
		if len(evs) != 2 || evs[1].Kind != core.EventAnswered || !strings.Contains(evs[1].Reason, q.Rule.Label()) {
			t.Errorf("%s: events %+v; want asked, then answered naming the rule", c.name, evs)
		}
		res, err := core.ResumeOf(q)
		if err != nil {
			t.Fatalf("%s: resume: %v", c.name, err)
		}
		p, err := fence.ParseResume(res.Text)
		if err != nil {
			t.Fatalf("%s: parse resume: %v", c.name, err)
		}
		if p.Lines[1] != w.opening || !contains(p.Lines, w.verdict) {
			t.Errorf("%s: resume lines %q; want opening %q and %q", c.name, p.Lines, w.opening, w.verdict)
		}
		if res.Structured.Approved == nil || *res.Structured.Approved != w.approved {
			t.Errorf("%s: structured approved %v, want %v", c.name, res.Structured.Approved, w.approved)
		}
		if line := card.OutcomeLine(q); !strings.Contains(line, q.Rule.Label()) || !strings.Contains(line, "nobody looked") {
			t.Errorf("%s: outcome line %q", c.name, line)
		}
	}
	// The deny's reason is the operator's words, fenced.
	res, err := core.ResumeOf(e.get(ids["deny with the rule's reason"]))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := fence.ParseResume(res.Text)
	if n := len(p.Regions); n == 0 || p.Regions[n-1].Tag != fence.TagReason || p.Regions[n-1].Content != "No network access from this repository." {
		t.Errorf("deny: regions %+v; want the rule's reason fenced last", p.Regions)
	}
	// A rule's deny is not a person's: it is not a standing approval's
	// to override, and a repeat of the ask gets the same closed question.
	again := guardedCall("fetch", `{"url":"https://example.com"}`)
	again.ToolCallID = cases[1].in.ToolCallID
	if q := e.repeat(again); q.ID != ids["deny with the rule's reason"] || q.State != core.StateAnswered {
		t.Errorf("a repeat of a denied ask got %s (%s)", q.ID, q.State)
	}

	// After "don't ask again for this tool in this run", the run's calls
	// to that tool are approved at once, and one a rule sends on to two
	// people as hard to reverse is still asked of them.
	first := e.ask(guardedCall("shell", `{"command":"make test"}`))
	e.approveStanding(first.ID, core.StandingRequest{Scope: core.StandingRun})
	if q := e.ask(guardedCall("shell", `{"command":"make lint"}`)); core.CloserOf(q) != core.CloserStanding {
		t.Errorf("a call the standing approval covers: %s, closed by %q", q.State, core.CloserOf(q))
	}
	if q := e.ask(guardedCall("shell", `{"command":"rm -rf build"}`)); q.State != core.StateOpen || q.Route != "two" || q.Quorum != 2 ||
		q.Reversibility != core.HardToReverse {
		t.Errorf("rm -rf after a standing approval: %s on %s, quorum %d, %s; want asked of two on two", q.State, q.Route, q.Quorum, q.Reversibility)
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
