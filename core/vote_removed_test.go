package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// removedVoterConfig is route default of group g's members, two of whom
// must agree, denies counted (DenyCount) when count is set.
func removedVoterConfig(count bool, members ...string) core.Config {
	people := map[string]core.Person{}
	for _, n := range []string{"alice", "bob", "carol", "dave"} {
		people[n] = core.Person{IDs: map[core.Surface][]string{core.SurfaceAPI: {n + "-tok"}}}
	}
	route := core.Route{People: []string{"group:g"}, Quorum: 2}
	if count {
		route.Deny = core.DenyCount
	}
	return core.Config{Routes: map[string]core.Route{core.DefaultRoute: route}, ActorKey: []byte(coretest.ActorKey), People: people,
		Groups: map[string]core.Group{"g": {Members: members}}}
}

type removedVoter struct {
	t   *testing.T
	svc *core.Service
	q   *core.Question
}

func newRemovedVoter(t *testing.T, cfg core.Config) removedVoter {
	svc, err := core.New(coretest.OpenStore(t), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?",
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	if err != nil || q.Quorum != 2 {
		t.Fatalf("ask: %v %+v", err, q)
	}
	return removedVoter{t, svc, q}
}

func (f removedVoter) vote(who, option string) core.Outcome {
	f.t.Helper()
	o, err := f.svc.Answer(f.t.Context(), core.AnswerInput{QuestionID: f.q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: who + "-tok"}, OptionID: option})
	if err != nil {
		f.t.Fatalf("%s %s: %v", who, option, err)
	}
	return o
}

func (f removedVoter) reload(cfg core.Config) {
	f.t.Helper()
	if err := f.svc.Reconfigure(cfg); err != nil {
		f.t.Fatal(err)
	}
}

// TestARemovedVotersApprovalNoLongerCounts: a vote counts only while its
// voter may still decide, as a standing approval covers only while its
// grantor may. Before, alice's approve, cast before a reload took her
// off the route, and bob's closed a two-person sign-off that only bob,
// of those allowed, had approved. Cards, the resume and the agent's view
// count as the close does; alice back on the route, her vote counts
// again.
func TestARemovedVotersApprovalNoLongerCounts(t *testing.T) {
	f := newRemovedVoter(t, removedVoterConfig(false, "alice", "bob", "carol"))
	f.vote("alice", core.ApproveOption)
	f.reload(removedVoterConfig(false, "bob", "carol"))
	o := f.vote("bob", core.ApproveOption)
	if o.Closed {
		t.Fatalf("closed as %s by bob alone: %q", o.Question.State, card.OutcomeLine(o.Question))
	}
	lines := strings.Join(core.TallyOf(o.Question).Lines, "; ")
	if !strings.HasPrefix(lines, "1 of 2 approvals: bob") || !strings.Contains(lines, "1 no longer counts, its voter off the route: alice") {
		t.Errorf("the tally after bob's vote: %q", lines)
	}
	o = f.vote("carol", core.ApproveOption)
	if !o.Closed || !strings.Contains(card.OutcomeLine(o.Question), "2 of 2") || strings.Contains(card.OutcomeLine(o.Question), "alice") {
		t.Fatalf("after carol's approve: closed %v, %q", o.Closed, card.OutcomeLine(o.Question))
	}
	r, err := core.ResumeOf(o.Question)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Text, "alice") {
		t.Errorf("the agent's resume names alice, whose vote did not count:\n%s", r.Text)
	}

	back := newRemovedVoter(t, removedVoterConfig(false, "alice", "bob", "carol"))
	back.vote("alice", core.ApproveOption)
	back.reload(removedVoterConfig(false, "bob", "carol"))
	back.reload(removedVoterConfig(false, "alice", "bob", "carol"))
	if o := back.vote("bob", core.ApproveOption); !o.Closed {
		t.Errorf("alice is back on the route, yet her approve did not count with bob's")
	}
}

// TestARemovedVotersDenyNoLongerCounts: under deny: count, a deny by
// someone a reload took off the route is not counted against the
// threshold worked out from those on it now. Before, alice's deny and
// bob's closed the question denied while carol and dave could still
// approve it.
func TestARemovedVotersDenyNoLongerCounts(t *testing.T) {
	f := newRemovedVoter(t, removedVoterConfig(true, "alice", "bob", "carol", "dave"))
	f.vote("alice", core.DenyOption)
	f.reload(removedVoterConfig(true, "bob", "carol", "dave"))
	if o := f.vote("bob", core.DenyOption); o.Closed {
		t.Fatalf("closed denied with carol and dave still able to approve: %q", card.OutcomeLine(o.Question))
	}
	if o := f.vote("carol", core.DenyOption); !o.Closed || o.Question.Resolution.Approved == nil || *o.Question.Resolution.Approved {
		t.Fatalf("two denies of three people, quorum two: closed %v", o.Closed)
	}
}

// TestVotersLetInByARoleStillCount: a voter let in by a role (a Slack
// user group) keeps counting at the next vote, though the stored vote's
// decider carries no roles: the vote keeps the roles the route let them
// in by.
func TestVotersLetInByARoleStillCount(t *testing.T) {
	cfg := core.Config{ActorKey: []byte(coretest.ActorKey), Routes: map[string]core.Route{core.DefaultRoute: {Quorum: 2,
		Deciders: map[core.Surface][]string{core.SurfaceSlack: {"role:S9"}}}}}
	svc, err := core.New(coretest.OpenStore(t), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?",
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{"U1", "U2"} {
		o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption,
			Decider: core.Decider{Surface: core.SurfaceSlack, ID: u, Roles: []string{"S1", "S9"}}})
		if err != nil {
			t.Fatal(err)
		}
		if o.Closed != (i == 1) {
			t.Fatalf("after %s's approve: closed %v, %q", u, o.Closed, strings.Join(core.TallyOf(o.Question).Lines, "; "))
		}
	}
}

// TestDenyCountCountsTheEscalationRoutesPeople: under deny: count, once a
// question escalated the escalation route's people vote too, so they
// count among those who could still approve it. Before, the threshold
// counted the first route's three people alone, and two denies closed
// the question denied while three others could still approve.
func TestDenyCountCountsTheEscalationRoutesPeople(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	people := map[string]core.Person{}
	for _, n := range []string{"alice", "bob", "carol", "dave", "erin"} {
		people[n] = core.Person{IDs: map[core.Surface][]string{core.SurfaceAPI: {n + "-tok"}}}
	}
	cfg := core.Config{ActorKey: []byte(coretest.ActorKey), People: people, Routes: map[string]core.Route{
		"ops":   {People: []string{"person:alice", "person:bob", "person:carol"}, Quorum: 2, Deny: core.DenyCount, EscalateTo: "leads"},
		"leads": {People: []string{"person:dave", "person:erin"}},
	}}
	svc, err := core.New(coretest.OpenStore(t), cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?", Route: "ops",
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`), Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour + time.Minute)
	if rep, err := svc.Tick(t.Context()); err != nil || rep.Escalated != 1 {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	f := removedVoter{t, svc, q}
	f.vote("alice", core.DenyOption)
	if o := f.vote("bob", core.DenyOption); o.Closed {
		t.Fatalf("closed denied by two of five people, three of whom could still approve: %q", card.OutcomeLine(o.Question))
	}
	f.vote("dave", core.DenyOption)
	if o := f.vote("erin", core.DenyOption); !o.Closed {
		t.Fatal("four denies of five people, quorum two: still open")
	}
}

// TestALateActOnAQuorumsCloseIsToldAQuorumClosedIt: the 409 a late act
// gets for a question a quorum closed says a quorum did, not that its
// last voter alone closed it (law 2: the loser hears who closed it).
func TestALateActOnAQuorumsCloseIsToldAQuorumClosedIt(t *testing.T) {
	f := newRemovedVoter(t, removedVoterConfig(false, "alice", "bob", "carol"))
	f.vote("bob", core.ApproveOption)
	f.vote("carol", core.ApproveOption)
	_, err := f.svc.Cancel(t.Context(), core.CancelInput{QuestionID: f.q.ID, Owner: f.q.Agent, By: core.Decider{Surface: core.SurfaceAgent, ID: "ag"}})
	if msg := core.ErrorMessage(err); !strings.Contains(msg, "already closed by a quorum of 2 (the last vote by ") {
		t.Errorf("a late cancel is told %q", msg)
	}
}

// TestALateActIsToldHowManyVotesClosedIt: the 409 names the votes that
// closed the question, those for the way it closed, not every vote cast.
// Before, a veto was told as "a quorum of 2" (an approve and the deny that
// closed it), and two approves past an earlier deny as "a quorum of 3".
func TestALateActIsToldHowManyVotesClosedIt(t *testing.T) {
	for _, c := range []struct {
		name  string
		count bool
		votes [][2]string
		want  string
	}{
		{"a veto", false, [][2]string{{"alice", core.ApproveOption}, {"bob", core.DenyOption}}, "already closed by a deny by person bob on api at "},
		{"approves past a deny", true, [][2]string{{"alice", core.DenyOption}, {"bob", core.ApproveOption}, {"carol", core.ApproveOption}},
			"already closed by a quorum of 2 (the last vote by person carol on api) at "},
		{"denies counted", true, [][2]string{{"alice", core.ApproveOption}, {"bob", core.DenyOption}, {"carol", core.DenyOption}, {"dave", core.DenyOption}},
			"already closed by 3 denies (the last by person dave on api) at "},
	} {
		f := newRemovedVoter(t, removedVoterConfig(c.count, "alice", "bob", "carol", "dave"))
		for _, v := range c.votes {
			f.vote(v[0], v[1])
		}
		_, err := f.svc.Cancel(t.Context(), core.CancelInput{QuestionID: f.q.ID, Owner: f.q.Agent, By: core.Decider{Surface: core.SurfaceAgent, ID: "ag"}})
		if msg := core.ErrorMessage(err); !strings.Contains(msg, c.want) {
			t.Errorf("%s: a late cancel is told %q, want %q", c.name, msg, c.want)
		}
	}
}
