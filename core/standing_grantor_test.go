package core_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// grantorConfig is route ops with bob, alice when withAlice, and anyone
// in Slack user group S9.
func grantorConfig(withAlice bool) core.Config {
	c := core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{
		"ops": {People: []string{"person:bob"}, Deciders: map[core.Surface][]string{core.SurfaceSlack: {"role:S9"}}},
	}, People: map[string]core.Person{
		"alice": {IDs: map[core.Surface][]string{core.SurfaceAPI: {"alice-token"}}},
		"bob":   {IDs: map[core.Surface][]string{core.SurfaceAPI: {"bob-token"}}},
	}}
	if withAlice {
		r := c.Routes["ops"]
		r.People = append(r.People, "person:alice")
		c.Routes["ops"] = r
	}
	return c
}

// grantorFixture asks approvals of bash on route ops in run-1, one call
// or a batch of two.
type grantorFixture struct {
	t   *testing.T
	svc *core.Service
}

func (f grantorFixture) ask(calls int) *core.Question {
	f.t.Helper()
	in := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-1", Text: "Run?",
		Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`), Reversibility: core.Reversible, Route: "ops"}
	if calls > 1 {
		in.Tool, in.Arguments = "", nil
		for i := range calls {
			in.Calls = append(in.Calls, core.CallInput{ToolCallID: string(rune('a' + i)), Tool: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)})
		}
	}
	q, err := f.svc.Ask(context.Background(), in)
	if err != nil {
		f.t.Fatal(err)
	}
	return q
}

// grant approves a fresh ask as d, with a run-long standing approval.
func (f grantorFixture) grant(d core.Decider) {
	f.t.Helper()
	q := f.ask(1)
	if _, err := f.svc.Answer(context.Background(), core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.ApproveOption,
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		f.t.Fatal(err)
	}
}

// TestAStandingApprovalEndsWithItsGrantor: a standing approval covers a
// later ask only while its grantor may still decide on the route as
// configured now. A reload that takes the grantor off the route stops it
// covering, single calls and a batch's alike, without deleting it: put
// back, it covers again.
func TestAStandingApprovalEndsWithItsGrantor(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), grantorConfig(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := grantorFixture{t, svc}
	f.grant(core.Decider{Surface: core.SurfaceAPI, ID: "alice-token"})
	if q := f.ask(1); q.Open() {
		t.Fatal("alice's standing approval does not cover while she is on the route")
	}
	if err := svc.Reconfigure(grantorConfig(false)); err != nil {
		t.Fatal(err)
	}
	if q := f.ask(1); !q.Open() {
		t.Errorf("after alice left the route, her standing approval still closed the call as %s by %q", q.State, q.Resolution.Decider.Name)
	}
	if q := f.ask(2); !q.Open() || len(q.Answers) != 0 {
		t.Errorf("after alice left the route, her standing approval still decided a batch: %s, %d calls decided", q.State, len(q.Answers))
	}
	if all, err := svc.ListStandings(context.Background()); err != nil || len(all) != 1 {
		t.Fatalf("standing approvals after the reload: %v, %v; want alice's, kept", all, err)
	}
	if err := svc.Reconfigure(grantorConfig(true)); err != nil {
		t.Fatal(err)
	}
	if q := f.ask(1); q.Open() {
		t.Error("alice is back on the route, yet her standing approval does not cover")
	}
}

// TestAStandingApprovalByARoleEndsWithTheRole: a grantor let in by a
// platform role (a Slack user group) covers later calls while the route
// still lets that role in, and no longer once a reload takes the role off
// the route.
func TestAStandingApprovalByARoleEndsWithTheRole(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), grantorConfig(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := grantorFixture{t, svc}
	f.grant(core.Decider{Surface: core.SurfaceSlack, ID: "U7", Roles: []string{"S1", "S9"}})
	if q := f.ask(1); q.Open() {
		t.Fatal("a standing approval by a member of the route's user group does not cover")
	}
	c := grantorConfig(false)
	r := c.Routes["ops"]
	r.Deciders = map[core.Surface][]string{core.SurfaceSlack: {"role:S2"}}
	c.Routes["ops"] = r
	if err := svc.Reconfigure(c); err != nil {
		t.Fatal(err)
	}
	if q := f.ask(1); !q.Open() {
		t.Errorf("after the route dropped the grantor's user group, their standing approval still closed the call as %s by %q", q.State, q.Resolution.Decider.Name)
	}
}

// TestADormantStandingApprovalIsListedAsSuch: a standing approval that
// covers nothing under the configuration in force (its grantor taken off
// the route, its route forbidding them or gone) is listed marked dormant
// with why, and unmarked again once a reload puts things back, so an
// operator's list never shows as approving what it would not.
func TestADormantStandingApprovalIsListedAsSuch(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), grantorConfig(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	grantorFixture{t, svc}.grant(core.Decider{Surface: core.SurfaceAPI, ID: "alice-token"})
	dormant := func() string {
		t.Helper()
		all, err := svc.ListStandings(context.Background())
		if err != nil || len(all) != 1 {
			t.Fatalf("standing approvals: %v, %v; want alice's", all, err)
		}
		return all[0].Dormant
	}
	if d := dormant(); d != "" {
		t.Fatalf("alice is on the route, yet her standing approval is listed dormant: %q", d)
	}
	forbidding := grantorConfig(true)
	r := forbidding.Routes["ops"]
	r.Standing = new(false)
	forbidding.Routes["ops"] = r
	quorum := grantorConfig(true)
	r = quorum.Routes["ops"]
	r.Quorum = 2
	quorum.Routes["ops"] = r
	for _, c := range []struct {
		name string
		cfg  core.Config
		want string
	}{
		{"alice off the route", grantorConfig(false), "its grantor may no longer decide on route ops"},
		{"standing: false", forbidding, "route ops no longer allows standing approvals"},
		{"quorum of two", quorum, "route ops now needs 2 people to agree"},
		{"route gone", core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{"other": {}}}, "route ops is no longer configured"},
		{"all put back", grantorConfig(true), ""},
	} {
		if err := svc.Reconfigure(c.cfg); err != nil {
			t.Fatal(err)
		}
		if d := dormant(); d != c.want {
			t.Errorf("%s: listed dormant %q, want %q", c.name, d, c.want)
		}
	}
}

// TestGrantOfIsNilForAGrantThatCoversNothing: a standing approval granted
// by someone the route in force no longer lets decide (a reload took alice
// off route ops after the ask; the route as asked still let her answer
// it) covers nothing, so GrantOf, which the hook door trusts to hand the
// host a rule of its own, does not return it. Before, it did, Dormant
// and all: Claude Code was told to stop asking about the tool for the
// session, though askbridge would have asked a person about every such
// call.
func TestGrantOfIsNilForAGrantThatCoversNothing(t *testing.T) {
	svc, err := core.New(coretest.OpenStore(t), grantorConfig(true), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := grantorFixture{t, svc}
	q := f.ask(1)
	if err := svc.Reconfigure(grantorConfig(false)); err != nil {
		t.Fatal(err)
	}
	o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice-token"},
		OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || !o.Closed {
		t.Fatalf("alice's approve of the question asked while she was on the route: %+v, %v", o, err)
	}
	if later := f.ask(1); !later.Open() {
		t.Fatalf("alice's grant covered a later ask: closed by %s", core.CloserOf(later))
	}
	if st, err := svc.GrantOf(t.Context(), o.Question); err != nil || st != nil {
		t.Errorf("GrantOf: %+v, %v; want none, as the grant covers nothing", st, err)
	}
	// Still listed for operators, saying why it covers nothing.
	all, err := svc.ListStandings(t.Context())
	if err != nil || len(all) != 1 || all[0].Dormant == "" {
		t.Errorf("the standing approvals listed: %+v, %v", all, err)
	}
}
