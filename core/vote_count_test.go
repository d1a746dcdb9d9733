package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// newTimedVoters is newRemovedVoter on a simulated clock, the question
// asking for quorum (0: the route's), timing out in an hour.
func newTimedVoters(t *testing.T, cfg core.Config, quorum int) (removedVoter, *core.SimClock) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(coretest.OpenStore(t), cfg, clock)
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?", Quorum: quorum,
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{"env":"prod"}`), Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return removedVoter{t, svc, q}, clock
}

func (f removedVoter) get() *core.Question {
	f.t.Helper()
	q, err := f.svc.Get(f.t.Context(), f.q.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return q
}

func (f removedVoter) timeOut(clock *core.SimClock) *core.Question {
	f.t.Helper()
	clock.Advance(time.Hour + time.Minute)
	if rep, err := f.svc.Tick(f.t.Context()); err != nil || rep.TimedOut != 1 {
		f.t.Fatalf("tick: %+v, %v", rep, err)
	}
	return f.get()
}

// TestARemovedVotersVoteStopsCountingAtTheReload: the tally reads who may
// decide as the chokepoint does, from the reload on, not from the next
// vote. Before, alice's approve, cast before a reload took her off the
// route, still showed as "1 of 2 approvals: alice" on every card, the
// operator's view and the timeout's reason, and the agent's resume listed
// it, as long as nobody voted after the reload. What the close counted is
// kept with it: a reload that puts alice back changes no closed record.
func TestARemovedVotersVoteStopsCountingAtTheReload(t *testing.T) {
	f, clock := newTimedVoters(t, removedVoterConfig(false, "alice", "bob", "carol"), 0)
	f.vote("alice", core.ApproveOption)
	f.reload(removedVoterConfig(false, "bob", "carol"))
	want := []string{"0 of 2 approvals", "1 no longer counts, its voter off the route: alice-tok"}
	if got := core.TallyOf(f.get()).Lines; strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("the tally read after the reload: %q\nwant %q", got, want)
	}
	if got := f.svc.WaitingOn(f.get()).Tally; got == nil || strings.Join(got.Lines, "; ") != strings.Join(want, "; ") {
		t.Errorf("the operator's view of the tally: %+v", got)
	}

	q := f.timeOut(clock)
	if r := q.Resolution.Reason; !strings.Contains(r, "0 of 2 approvals; 1 no longer counts") {
		t.Errorf("the timeout's reason: %q", r)
	}
	f.reload(removedVoterConfig(false, "alice", "bob", "carol"))
	q = f.get()
	r, err := core.ResumeOf(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Structured.Votes) != 0 || strings.Contains(r.Text, "option-id") {
		t.Errorf("the agent's resume counts alice's vote, which did not count at the close: %+v\n%s", r.Structured.Votes, r.Text)
	}
	if line := card.OutcomeLine(q); strings.Contains(line, "1 of 2") {
		t.Errorf("the card's outcome counts alice's vote: %q", line)
	}
}

// TestAQuorumNobodyLeftCanReachSaysSo: a reload that leaves fewer people
// able to decide than a question's quorum is told on its tally, and a
// timeout says the quorum could not be reached rather than that it was
// not reached in time. Before, its cards read "2 of 3 approvals" as if a
// third person might still come, and the agent heard its question timed
// out for want of votes nobody could cast. The question is not closed at
// the reload: a reload that puts people back, or an escalation, may still
// let it reach its quorum, and a reload must not decide a question.
func TestAQuorumNobodyLeftCanReachSaysSo(t *testing.T) {
	cfg := removedVoterConfig(false, "alice", "bob", "carol")
	f, clock := newTimedVoters(t, cfg, 3)
	if f.q.Quorum != 3 {
		t.Fatalf("quorum %d", f.q.Quorum)
	}
	f.vote("alice", core.ApproveOption)
	if got := strings.Join(core.TallyOf(f.get()).Lines, "; "); strings.Contains(got, "cannot be reached") {
		t.Errorf("three people, a quorum of three: %q", got)
	}
	f.reload(removedVoterConfig(false, "alice", "bob"))
	const cannot = "only 2 people may decide it now: a quorum of 3 cannot be reached"
	if got := strings.Join(core.TallyOf(f.get()).Lines, "; "); !strings.Contains(got, cannot) {
		t.Errorf("the tally read after the reload: %q\nwant it to say %q", got, cannot)
	}
	if o := f.vote("bob", core.ApproveOption); o.Closed || !strings.Contains(strings.Join(core.TallyOf(o.Question).Lines, "; "), cannot) {
		t.Errorf("bob's vote: closed %v, tally %q", o.Closed, core.TallyOf(o.Question).Lines)
	}
	q := f.timeOut(clock)
	const could = "only 2 people could decide it: a quorum of 3 could not be reached"
	if r := q.Resolution.Reason; !strings.Contains(r, "2 of 3 approvals: alice-tok, bob-tok; "+could) {
		t.Errorf("the timeout's reason: %q\nwant it to say %q", r, could)
	}
	r, err := core.ResumeOf(q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, could) {
		t.Errorf("the agent's resume:\n%s", r.Text)
	}

	// A reload that takes every person the question's route names out
	// of the configuration leaves nobody at all.
	f, _ = newTimedVoters(t, cfg, 0)
	carol := core.Config{ActorKey: cfg.ActorKey, People: map[string]core.Person{"carol": cfg.People["carol"]},
		Routes: map[string]core.Route{core.DefaultRoute: {People: []string{"person:carol"}}}}
	f.reload(carol)
	const nobody = "nobody may decide it now: a quorum of 2 cannot be reached"
	if got := strings.Join(core.TallyOf(f.get()).Lines, "; "); got != "0 of 2 approvals; "+nobody {
		t.Errorf("the tally with nobody left: %q", got)
	}
}
