package discord

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// bigBatch is a batch of core.MaxBatchCalls shell calls, each with a
// command of a realistic length, none decided yet.
func bigBatch() *core.Question {
	q := baseQ("faaaaaaaaaaaaaaaa", core.KindApproval)
	q.Text = "May I tidy the release directories on the app servers?"
	for i := range core.MaxBatchCalls {
		args := fmt.Sprintf(`{"command":"find /srv/app/releases/%02d -maxdepth 1 -type d -mtime +30 -print -exec rm -rf {} +","timeout":120}`, i+1)
		q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), ToolCall: core.ToolCall{
			Tool: "Bash", Arguments: json.RawMessage(args), ArgumentsSHA256: fmt.Sprintf("%064d", i+1)}})
	}
	return q
}

// byAlice and byStanding are a call decided by Alice on Discord, and one
// approved at the ask by a standing approval Alice granted an hour before.
func byAlice(id, option string) core.ItemAnswer {
	return core.ItemAnswer{ItemID: id, OptionID: option, Decider: alicePublic, At: answered}
}

func byStanding(id string) core.ItemAnswer {
	g := core.StandingUse{ID: "st-1", GrantedBy: alicePublic, GrantedAt: asked.Add(-time.Hour)}
	d := alicePublic
	d.Name = core.StandingLabel(core.Standing{GrantedBy: g.GrantedBy, GrantedAt: g.GrantedAt})
	return core.ItemAnswer{ItemID: id, OptionID: core.ApproveOption, Decider: d, At: asked, Standing: &g}
}

// verdictLines are the content's lines, with a leading "**Label:** "
// taken off, so a call's line in a list of verdicts can be matched whole.
func verdictLines(content string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(content, "\n") {
		if strings.HasPrefix(l, "**") {
			if _, rest, ok := strings.Cut(l[2:], ":** "); ok {
				l = rest
			}
		}
		out[l] = true
	}
	return out
}

// checkOutcomeWhole fails unless content holds q's outcome line whole and,
// for each decided call, one line with its number, tool, verdict and
// decider, none of them cut.
func checkOutcomeWhole(t *testing.T, q *core.Question, content string) {
	t.Helper()
	line := card.OutcomeLine(q)
	if line == "" || !strings.Contains(content, escape(line, maxContent)) {
		t.Errorf("the outcome line is not whole; want %q in:\n%s", line, content)
	}
	lines := verdictLines(content)
	for i, co := range core.CallOutcomes(q) {
		verdict, by, ok := decided(co)
		if !ok {
			continue
		}
		want := fmt.Sprintf("%d. %s: %s (by %s)", i+1, co.Call.Tool, verdict, by)
		if !lines[want] {
			t.Errorf("call %d: no line %q in:\n%s", i+1, want, content)
		}
	}
}

// TestClosedBigBatchShowsWhoDecidedWhat: a closed batch of the most calls
// core allows shows who or what closed it, and each call's verdict and
// who decided it, whole, within Discord's limits; the agent's text gives
// way. Before, the outcome was cut with the agent's text from about eight
// calls: "✅ Decided call…", "1. Bash: App…", "(by a standing a…)".
func TestClosedBigBatchShowsWhoDecidedWhat(t *testing.T) {
	mixed := bigBatch()
	for i, c := range mixed.Calls {
		switch {
		case i%2 == 0:
			mixed.Answers = append(mixed.Answers, byStanding(c.ToolCallID))
		case i == 5:
			mixed.Answers = append(mixed.Answers, byAlice(c.ToolCallID, core.DenyOption))
		default:
			mixed.Answers = append(mixed.Answers, byAlice(c.ToolCallID, core.ApproveOption))
		}
	}
	mixed = closeAs(mixed, core.StateAnswered, alicePublic, func(r *core.Resolution) { r.ClosedBy = core.CloserParts })

	timedOut := bigBatch()
	timedOut.Answers = []core.ItemAnswer{byAlice(timedOut.Calls[1].ToolCallID, core.DenyOption)}
	timedOut = closeAs(timedOut, core.StateTimedOut, core.System, func(r *core.Resolution) { r.Reason = core.TimeoutReason })

	// The same with the agent's text at core's limits.
	huge := func(q *core.Question) *core.Question {
		h := *q
		h.Text, h.Context = strings.Repeat("why ", core.MaxTextLen/4), strings.Repeat("`ctx` ", core.MaxContextLen/6)
		h.Calls = append([]core.BatchCall(nil), q.Calls...)
		for i := range h.Calls {
			h.Calls[i].Arguments = json.RawMessage(`{"command":"` + strings.Repeat("x", core.MaxArgumentsLen/core.MaxBatchCalls-20) + `"}`)
		}
		return &h
	}

	// Tool names and deciders' names far past what fits: the outcome is
	// then cut with the rest, but the card still fits.
	absurd := huge(mixed)
	absurd.Answers = append([]core.ItemAnswer(nil), mixed.Answers...)
	for i := range absurd.Calls {
		absurd.Calls[i].Tool = strings.Repeat("t", core.MaxIDLen)
		absurd.Answers[i].Decider.Name = strings.Repeat("*", 200)
	}
	t.Run("absurd", func(t *testing.T) {
		e := edit(absurd, core.MessageRef{Room: "1", ID: "2"})
		checkLimits(t, absurd.ID, *e.Content, *e.Components)
		if !strings.HasSuffix(*e.Content, footer(string(absurd.ID))) || !strings.Contains(*e.Content, "✅ Decided call by call") {
			t.Errorf("the footer or the outcome was cut away:\n%s", *e.Content)
		}
	})

	for name, q := range map[string]*core.Question{
		"mixed": mixed, "timed_out": timedOut, "mixed_huge": huge(mixed), "timed_out_huge": huge(timedOut),
	} {
		t.Run(name, func(t *testing.T) {
			m := post(q, false)
			checkLimits(t, q.ID, m.Content, m.Components)
			checkOutcomeWhole(t, q, m.Content)
			e := edit(q, core.MessageRef{Room: "1", ID: "2"})
			checkLimits(t, q.ID, *e.Content, *e.Components)
			checkOutcomeWhole(t, q, *e.Content)
			if !strings.Contains(*e.Content, escape(q.Text, 40)[:20]) {
				t.Errorf("the question itself was crowded out:\n%s", *e.Content)
			}
			if !strings.HasSuffix(*e.Content, footer(string(q.ID))) {
				t.Errorf("the footer was cut:\n%s", *e.Content)
			}
		})
	}
}

// verdictLine is one line of a closed batch's verdicts: "3. Bash: Denied
// (by Alice)", or, for a run of calls decided alike, "1–20. Bash:
// Approved (by …)" (whose tools may be cut).
var verdictLine = regexp.MustCompile(`^(\d+)(?:–(\d+))?\. .*: (.+) \(by (.+)\)$`)

// checkVerdictsWhole fails unless content holds q's outcome line whole
// and, for each decided call, its verdict and who decided it, whole, on a
// line that names its number (alone, or in a run of calls).
func checkVerdictsWhole(t *testing.T, q *core.Question, content string) {
	t.Helper()
	line := card.OutcomeLine(q)
	if line == "" || !strings.Contains(content, escape(line, maxContent)) {
		t.Errorf("the outcome line is not whole; want %q in:\n%s", line, content)
	}
	type said struct{ verdict, by string }
	got := map[int]said{}
	for l := range verdictLines(content) {
		m := verdictLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		from, _ := strconv.Atoi(m[1])
		to := from
		if m[2] != "" {
			to, _ = strconv.Atoi(m[2])
		}
		for n := from; n <= to; n++ {
			got[n] = said{m[3], m[4]}
		}
	}
	for i, co := range core.CallOutcomes(q) {
		verdict, by, ok := decided(co)
		if !ok {
			continue
		}
		if want := (said{verdict, by}); got[i+1] != want {
			t.Errorf("call %d: %+v; want %+v in:\n%s", i+1, got[i+1], want, content)
		}
	}
}

// TestClosedBatchOfLongToolNamesKeepsWhoDecided: a closed batch of the
// most calls core allows, each an MCP tool with a name of everyday length
// (mcp__github__create_pull_request) or approved by a standing approval
// of someone with a long name, still says whole who or what closed it and
// who decided each call; the tools' names give way. Before, once a line a
// call did not fit whole, the outcome was cut with the agent's text:
// "✅ Approved at once on 2026-06-01 0…", "(by a standing approval Alice
// grante…)".
func TestClosedBatchOfLongToolNamesKeepsWhoDecided(t *testing.T) {
	longTools := bigBatch()
	for i, c := range longTools.Calls {
		longTools.Calls[i].Tool = "mcp__github__create_pull_request"
		longTools.Answers = append(longTools.Answers, byStanding(c.ToolCallID))
	}
	longTools = closeAs(longTools, core.StateAnswered, alicePublic, func(r *core.Resolution) { r.ClosedBy = core.CloserStanding })

	longName := bigBatch()
	grantor := alicePublic
	grantor.Name = "Alexandra Konstantinopoulou-Whitfield"
	for i, c := range longName.Calls {
		a := byStanding(c.ToolCallID)
		a.Standing.GrantedBy = grantor
		if i == 7 {
			a = byAlice(c.ToolCallID, core.DenyOption)
		}
		longName.Answers = append(longName.Answers, a)
	}
	longName = closeAs(longName, core.StateAnswered, alicePublic, func(r *core.Resolution) { r.ClosedBy = core.CloserParts })

	for name, q := range map[string]*core.Question{"long_tools": longTools, "long_name": longName} {
		t.Run(name, func(t *testing.T) {
			m := post(q, false)
			checkLimits(t, q.ID, m.Content, m.Components)
			checkVerdictsWhole(t, q, m.Content)
			e := edit(q, core.MessageRef{Room: "1", ID: "2"})
			checkLimits(t, q.ID, *e.Content, *e.Components)
			checkVerdictsWhole(t, q, *e.Content)
			if !strings.HasSuffix(*e.Content, footer(string(q.ID))) {
				t.Errorf("the footer was cut:\n%s", *e.Content)
			}
		})
	}
}

// decided is how a closed card should say a call was decided: its
// verdict and who decided it, as escaped on the card; ok is false for a
// call nobody decided.
func decided(co core.CallOutcome) (verdict, by string, ok bool) {
	d := co.Decision
	if d == nil {
		return "", "", false
	}
	verdict = "Denied"
	if d.OptionID == core.ApproveOption {
		verdict = "Approved"
	}
	return verdict, escape(card.PartBy(*d), maxContent), true
}
