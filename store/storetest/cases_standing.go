package storetest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func init() {
	register("StandingApprovalClosesMatchingAskAtOnce", testStandingMatch)
	register("StandingApprovalNeverCoversHardToReverse", testStandingHardToReverse)
	register("RevokedStandingApprovalStopsMatching", testStandingRevoked)
	register("RunEndEndsStandingApproval", testStandingRunEnd)
	register("StandingApprovalForAgentWindow", testStandingWindow)
	register("StandingApprovalForSameArguments", testStandingSameArguments)
}

// writeCall is a reversible approval of write_file on route ops.
func writeCall(run core.RunID, path string) core.AskInput {
	return core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: run, ToolCallID: nextCall(), Route: "ops",
		Text: "Write the file?", Reversibility: core.Reversible, Tool: "write_file",
		Arguments: json.RawMessage(`{"path":"` + path + `"}`)}
}

// approveStanding approves q as an API operator and asks for a standing
// approval of the given scope; it fails the test unless one was granted.
func (e *env) approveStanding(id core.QuestionID, req core.StandingRequest) *core.Standing {
	e.t.Helper()
	o, err := e.svc.Answer(e.t.Context(), core.AnswerInput{QuestionID: id, Decider: apiDecider("alice"),
		OptionID: core.ApproveOption, Standing: &req})
	if err != nil || o.Standing == nil || !o.Closed {
		e.t.Fatalf("approve with a standing approval: %+v, %v", o, err)
	}
	return o.Standing
}

func (e *env) standings() []core.Standing {
	e.t.Helper()
	all, err := e.svc.ListStandings(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return all
}

// covered fails the test unless q was closed at once by standing
// approval st.
func covered(t *testing.T, q *core.Question, st *core.Standing) {
	t.Helper()
	r := q.Resolution
	if q.State != core.StateAnswered || r == nil || r.Approved == nil || !*r.Approved || r.Standing == nil || r.Standing.ID != st.ID {
		t.Fatalf("the ask was not closed by standing approval %s: state %s, resolution %+v", st.ID, q.State, r)
	}
	if want := core.StandingLabel(*st); r.Decider.Name != want || !strings.HasPrefix(want, "standing approval by Operator alice at ") {
		t.Fatalf("decider %q, want %q", r.Decider.Name, want)
	}
}

func testStandingMatch(t *testing.T, h Harness) {
	e := newEnv(t, h)
	first := e.ask(writeCall("run-1", "/tmp/a"))
	if first.Call.Standing == nil || first.Call.Standing.Hours != 8 {
		t.Fatalf("the ask offers %+v, want the route's offer", first.Call.Standing)
	}
	st := e.approveStanding(first.ID, core.StandingRequest{Scope: core.StandingRun})
	if st.Tool != "write_file" || st.RunID != "run-1" || st.Agent != "agent-a" || st.QuestionID != first.ID {
		t.Fatalf("standing approval %+v", st)
	}
	e.claimAll(core.SurfaceSlack, "c")
	e.claimAll(core.SurfaceTelegram, "c")
	e.restart() // standing approvals are durable

	next := e.ask(writeCall("run-1", "/tmp/b"))
	covered(t, next, st)
	if got := e.get(next.ID); got.State != core.StateAnswered {
		t.Fatalf("stored as %s", got.State)
	}
	if ds := append(e.claimAll(core.SurfaceSlack, "c"), e.claimAll(core.SurfaceTelegram, "c")...); len(ds) != 0 {
		t.Fatalf("a covered ask posted %d cards or edits", len(ds))
	}
	res, err := core.ResumeOf(next)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "A standing approval answered this question at once") || res.Structured.Standing == nil ||
		res.Structured.Standing.ID != st.ID || !*res.Structured.Approved {
		t.Fatalf("the resume does not say a standing approval covered it:\n%s", res.Text)
	}
	kinds := coretest.Kinds(e.events(next.ID))
	if len(kinds) != 2 || kinds[0] != core.EventAsked || kinds[1] != core.EventAnswered {
		t.Fatalf("covered ask's events %v", kinds)
	}
	if kinds := coretest.Kinds(e.events(first.ID)); count(kinds, core.EventStandingGranted) != 1 {
		t.Fatalf("the granting approval's events %v lack %s", kinds, core.EventStandingGranted)
	}
	if all := e.standings(); len(all) != 1 || all[0].ID != st.ID {
		t.Fatalf("listed %+v", all)
	}
	// Another run, another tool, another route: asked as usual.
	for name, in := range map[string]core.AskInput{
		"another run":  writeCall("run-2", "/tmp/c"),
		"another tool": func() core.AskInput { in := writeCall("run-1", "/tmp/c"); in.Tool = "delete_file"; return in }(),
		"another route": func() core.AskInput {
			in := writeCall("run-1", "/tmp/c")
			in.Route = core.DefaultRoute
			return in
		}(),
	} {
		if q := e.ask(in); !q.Open() {
			t.Fatalf("%s: the ask was closed (%s) by a standing approval that does not cover it", name, q.State)
		}
	}
}

func count(kinds []core.EventKind, k core.EventKind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

func testStandingHardToReverse(t *testing.T, h Harness) {
	e := newEnv(t, h)
	st := e.approveStanding(e.ask(writeCall("run-1", "/tmp/a")).ID, core.StandingRequest{Scope: core.StandingAgent})
	hard := writeCall("run-1", "/tmp/b")
	hard.Reversibility = core.HardToReverse
	q := e.ask(hard)
	if !q.Open() || q.Call.Standing != nil {
		t.Fatalf("a hard-to-reverse ask was %s, offering %+v, despite %s", q.State, q.Call.Standing, st.ID)
	}
	// Nor can one be granted from it, nor on a route that forbids them.
	strict := writeCall("run-1", "/tmp/c")
	strict.Route = "strict"
	for _, id := range []core.QuestionID{q.ID, e.ask(strict).ID} {
		_, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: id, Decider: apiDecider("alice"),
			OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}})
		if core.ErrorCode(err) != core.CodeInvalid || !e.get(id).Open() {
			t.Fatalf("granting from %s: %v", id, err)
		}
	}
	// The route's window is the only one on offer: the default route has
	// none.
	plain := writeCall("run-1", "/tmp/d")
	plain.Route = core.DefaultRoute
	_, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: e.ask(plain).ID, Decider: apiDecider("alice"),
		OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingAgent}})
	if core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("an agent-wide grant on a route without hours: %v", err)
	}
}

func testStandingRevoked(t *testing.T, h Harness) {
	e := newEnv(t, h)
	st := e.approveStanding(e.ask(writeCall("run-1", "/tmp/a")).ID, core.StandingRequest{Scope: core.StandingRun})
	covered(t, e.ask(writeCall("run-1", "/tmp/b")), st)
	op := apiDecider("ops-lead")
	if got, err := e.svc.RevokeStanding(t.Context(), st.ID, op); err != nil || got.ID != st.ID {
		t.Fatalf("revoke: %+v, %v", got, err)
	}
	if q := e.ask(writeCall("run-1", "/tmp/c")); !q.Open() {
		t.Fatalf("a revoked standing approval still closed an ask: %s", q.State)
	}
	if all := e.standings(); len(all) != 0 {
		t.Fatalf("still listed: %+v", all)
	}
	if _, err := e.svc.RevokeStanding(t.Context(), st.ID, op); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("revoking twice: %v", err)
	}
	if kinds := coretest.Kinds(e.events(st.QuestionID)); count(kinds, core.EventStandingRevoked) != 1 {
		t.Fatalf("events %v lack %s", kinds, core.EventStandingRevoked)
	}
}

func testStandingRunEnd(t *testing.T, h Harness) {
	e := newEnv(t, h)
	run := e.approveStanding(e.ask(writeCall("run-1", "/tmp/a")).ID, core.StandingRequest{Scope: core.StandingRun})
	other := writeCall("run-1", "/tmp/b")
	other.Tool = "delete_file" // write_file in run-1 is covered already
	e.approveStanding(e.ask(other).ID, core.StandingRequest{Scope: core.StandingAgent})
	if _, err := e.svc.EndRun(t.Context(), core.Run{Agent: "agent-a", ID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	all := e.standings()
	if len(all) != 1 || all[0].Scope != core.StandingAgent {
		t.Fatalf("after the run ended: %+v, want only the agent's window", all)
	}
	if kinds := coretest.Kinds(e.events(run.QuestionID)); count(kinds, core.EventStandingEnded) != 1 {
		t.Fatalf("events %v lack %s", kinds, core.EventStandingEnded)
	}
}

func testStandingWindow(t *testing.T, h Harness) {
	e := newEnv(t, h)
	st := e.approveStanding(e.ask(writeCall("run-1", "/tmp/a")).ID, core.StandingRequest{Scope: core.StandingAgent})
	if want := st.GrantedAt.Add(8 * time.Hour); !st.Until.Equal(want) {
		t.Fatalf("window until %s, want %s", st.Until, want)
	}
	covered(t, e.ask(writeCall("run-7", "/tmp/b")), st) // any run of the agent
	other := writeCall("run-7", "/tmp/b")
	other.Agent = "agent-b"
	if q := e.ask(other); !q.Open() {
		t.Fatalf("another agent's ask was closed: %s", q.State)
	}
	e.clock.Advance(8 * time.Hour)
	if q := e.ask(writeCall("run-7", "/tmp/c")); !q.Open() {
		t.Fatalf("an ask after the window was closed: %s", q.State)
	}
	if all := e.standings(); len(all) != 0 {
		t.Fatalf("listed after its window: %+v", all)
	}
	// Revoking it now stops nothing: refused as gone, with nothing
	// logged. Before, it answered as revoked and the log said a person
	// had stopped what had already stopped.
	if _, err := e.svc.RevokeStanding(t.Context(), st.ID, apiDecider("ops-lead")); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("revoking it after its window: %v; want not found", err)
	}
	if kinds := coretest.Kinds(e.events(st.QuestionID)); count(kinds, core.EventStandingRevoked) != 0 {
		t.Fatalf("a revoke was logged after the window: %v", kinds)
	}
}

func testStandingSameArguments(t *testing.T, h Harness) {
	e := newEnv(t, h)
	st := e.approveStanding(e.ask(writeCall("run-1", "/tmp/a")).ID, core.StandingRequest{Scope: core.StandingRun, SameArguments: true})
	if st.ArgumentsSHA256 == "" {
		t.Fatal("no argument hash kept")
	}
	if q := e.ask(writeCall("run-1", "/tmp/other")); !q.Open() {
		t.Fatalf("other arguments were covered: %s", q.State)
	}
	covered(t, e.ask(writeCall("run-1", "/tmp/a")), st)
}
