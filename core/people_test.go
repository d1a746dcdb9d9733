package core_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func ids(kv ...string) map[core.Surface][]string {
	m := map[core.Surface][]string{}
	for i := 0; i < len(kv); i += 2 {
		m[core.Surface(kv[i])] = append(m[core.Surface(kv[i])], kv[i+1])
	}
	return m
}

func TestPeopleConfigRefusals(t *testing.T) {
	alice := core.Person{IDs: ids("slack", "U1", "telegram", "10")}
	for _, tt := range []struct {
		name   string
		people map[string]core.Person
		groups map[string]core.Group
		routes map[string]core.Route
		want   []string // every part must be in the error
	}{
		{"an id claimed twice", map[string]core.Person{"alice": alice, "bob": {IDs: ids("telegram", "10")}}, nil, nil,
			[]string{`telegram id "10"`, `"alice"`, `"bob"`}},
		{"a token name claimed twice", map[string]core.Person{"alice": {IDs: ids("api", "t")}, "bob": {IDs: ids("api", "t")}}, nil, nil,
			[]string{`api id "t"`, `"alice"`, `"bob"`}},
		{"an unknown group member", map[string]core.Person{"alice": alice}, map[string]core.Group{"leads": {Members: []string{"alice", "zed"}}}, nil,
			[]string{"groups.leads", `"zed"`}},
		{"an empty group", map[string]core.Person{"alice": alice}, map[string]core.Group{"leads": {}}, nil,
			[]string{"groups.leads"}},
		{"two slack ids", map[string]core.Person{"alice": {IDs: ids("slack", "U1", "slack", "U2")}}, nil, nil,
			[]string{"people.alice.slack"}},
		{"a surface that is not", map[string]core.Person{"alice": {IDs: ids("fax", "1")}}, nil, nil,
			[]string{"people.alice", `"fax"`}},
		{"dm without a chat id", map[string]core.Person{"alice": {IDs: ids("api", "t"), DM: true}}, nil, nil,
			[]string{"people.alice.dm"}},
		{"prefer without its id", map[string]core.Person{"alice": {IDs: ids("slack", "U1"), Prefer: core.SurfaceDiscord}}, nil, nil,
			[]string{"people.alice.prefer", "discord"}},
		{"a route naming an unknown person", map[string]core.Person{"alice": alice}, nil,
			map[string]core.Route{"r": {People: []string{"person:alice", "person:zed"}}}, []string{"routes.r.people", `"zed"`}},
		{"a route naming an unknown group", nil, nil,
			map[string]core.Route{"r": {People: []string{"group:leads"}}}, []string{"routes.r.people", `"leads"`}},
		{"a people entry of another form", nil, nil,
			map[string]core.Route{"r": {People: []string{"alice"}}}, []string{"routes.r.people", `"alice"`}},
		{"a person among one surface's accounts", map[string]core.Person{"alice": alice}, nil,
			map[string]core.Route{"r": {Deciders: map[core.Surface][]string{core.SurfaceSlack: {"person:alice"}}}}, []string{`"r"`, "deciders.slack", "people"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := core.New(coretest.OpenStore(t), core.Config{ActorKey: []byte("k"), People: tt.people, Groups: tt.groups, Routes: tt.routes}, nil)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

// TestConfigRefusalIsTheSameEachStart: a configuration with two faults
// of one kind (a person's accounts, a route's deciders) is refused for
// the same one on every start, the first by surface name, not whichever a
// map met first, so the operator fixing it sees one error at a time, and
// the same one.
func TestConfigRefusalIsTheSameEachStart(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  core.Config
		want string
	}{
		{"a person's accounts", core.Config{People: map[string]core.Person{
			"alice": {IDs: ids("api", " ", "fax", "1", "slack", "U1", "slack", "U2")}}}, "people.alice.api"},
		{"a route's deciders", core.Config{Routes: map[string]core.Route{"r": {Deciders: map[core.Surface][]string{
			core.SurfaceTelegram: {"person:alice"}, core.SurfaceDiscord: {"group:leads"}, core.SurfaceSlack: {"person:bob"}}}}}, "deciders.discord"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.ActorKey = []byte("k")
			var first string
			for range 40 {
				_, err := core.New(coretest.OpenStore(t), tt.cfg, nil)
				if err == nil {
					t.Fatal("accepted")
				}
				if first == "" {
					first = err.Error()
				}
				if err.Error() != first {
					t.Fatalf("refused for %q, and on another start for %q", first, err)
				}
			}
			if !strings.Contains(first, tt.want) {
				t.Fatalf("refused for %q; want %s, the first by name", first, tt.want)
			}
		})
	}
}

func TestPeopleDirectoryHidesAccounts(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{
		People: map[string]core.Person{
			"alice": {DisplayName: "Alice", IDs: ids("slack", "U-secret", "api", "alice-token"), DM: true},
			"bob":   {IDs: ids("telegram", "42")},
		},
		Groups: map[string]core.Group{"leads": {Members: []string{"bob", "alice"}}},
	})
	got := svc.People()
	want := core.Directory{
		People: []core.PersonView{
			{Name: "alice", DisplayName: "Alice", Surfaces: []core.Surface{core.SurfaceSlack, core.SurfaceAPI}, Groups: []string{"leads"}, DM: true},
			{Name: "bob", Surfaces: []core.Surface{core.SurfaceTelegram}, Groups: []string{"leads"}},
		},
		Groups: []core.Group{{Name: "leads", Members: []string{"bob", "alice"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("directory (-want +got):\n%s", diff)
	}
	raw, _ := json.Marshal(got)
	for _, secret := range []string{"U-secret", "alice-token", "42"} {
		if strings.Contains(string(raw), secret) {
			t.Fatalf("the directory shows account %q: %s", secret, raw)
		}
	}
}

func TestPseudonymOfAPersonIsNotOfAnAccount(t *testing.T) {
	key := []byte("k")
	slack := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Person: "alice"}
	tg := core.Decider{Surface: core.SurfaceTelegram, ID: "9", Person: "alice"}
	if core.Pseudonym(key, slack) != core.Pseudonym(key, tg) {
		t.Fatal("one person on two surfaces has two pseudonyms")
	}
	// An account whose id happens to be the person's name is not the person.
	if core.Pseudonym(key, slack) == core.Pseudonym(key, core.Decider{Surface: core.SurfaceSlack, ID: "alice"}) {
		t.Fatal("a person shares a pseudonym with an account named like them")
	}
}

// TestEveryActOfAPersonNamedByNameAlone: on a route that names people
// (person:, group:) and no account, each act of theirs is allowed from
// their account, recorded as the person, and refused to a stranger with
// a refused event; that includes Refusal, the check a door runs before
// it opens an edit form, which once looked at the raw account.
func TestEveryActOfAPersonNamedByNameAlone(t *testing.T) {
	svc, st := coretest.Open(t, coretest.Options{
		Routes: map[string]core.Route{"team": {People: []string{"person:alice", "group:leads"}}},
		People: map[string]core.Person{
			"alice": {DisplayName: "Alice", IDs: ids("slack", "U-alice")},
			"bob":   {DisplayName: "Bob", IDs: ids("telegram", "42")},
		},
		Groups: map[string]core.Group{"leads": {Members: []string{"bob"}}},
	})
	ctx := t.Context()
	alice := core.Decider{Surface: core.SurfaceSlack, ID: "U-alice", Name: "al1ce"}
	bob := core.Decider{Surface: core.SurfaceTelegram, ID: "42"}
	stranger := core.Decider{Surface: core.SurfaceSlack, ID: "U-mallory"}
	ask := func(quorum int) *core.Question {
		t.Helper()
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Write?", Route: "team",
			Reversibility: core.Reversible, Tool: "write", Arguments: json.RawMessage(`{"path":"a"}`),
			Editable: &core.Editable{All: true}, Quorum: quorum})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	approve := func(q *core.Question, d core.Decider) core.AnswerInput {
		return core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.ApproveOption}
	}
	acts := []struct {
		name   string
		quorum int
		act    func(q *core.Question, d core.Decider) (core.Outcome, error)
	}{
		{"approve", 1, func(q *core.Question, d core.Decider) (core.Outcome, error) { return svc.Answer(ctx, approve(q, d)) }},
		{"deny", 1, func(q *core.Question, d core.Decider) (core.Outcome, error) {
			return svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: d, OptionID: core.DenyOption})
		}},
		{"vote", 2, func(q *core.Question, d core.Decider) (core.Outcome, error) { return svc.Answer(ctx, approve(q, d)) }},
		{"edit", 1, func(q *core.Question, d core.Decider) (core.Outcome, error) {
			// A door that opens a form asks first, then sends the answer.
			if err := svc.Refusal(ctx, q, d); err != nil {
				return core.Outcome{}, err
			}
			in := approve(q, d)
			in.Arguments = json.RawMessage(`{"path":"b"}`)
			return svc.Answer(ctx, in)
		}},
		{"decline", 1, func(q *core.Question, d core.Decider) (core.Outcome, error) { return svc.Decline(ctx, q.ID, d) }},
		{"grant", 1, func(q *core.Question, d core.Decider) (core.Outcome, error) {
			in := approve(q, d)
			in.Standing = &core.StandingRequest{Scope: core.StandingRun, SameArguments: true}
			o, err := svc.Answer(ctx, in)
			if err == nil && (o.Standing == nil || o.Standing.GrantedBy.Person == "" ||
				o.Standing.GrantedBy.Person != o.Question.Resolution.Decider.Person) {
				t.Fatalf("the grant by %s: %+v, not by the approver's person", d.ID, o.Standing)
			}
			if err == nil {
				if _, err := svc.RevokeStanding(ctx, o.Standing.ID, core.System); err != nil {
					t.Fatal(err)
				}
			}
			return o, err
		}},
	}
	for _, a := range acts {
		for _, p := range []struct {
			d      core.Decider
			person string
		}{{alice, "alice"}, {bob, "bob"}} {
			t.Run(a.name+" by "+p.person, func(t *testing.T) {
				q := ask(a.quorum)
				if !svc.MayAnswer(q, p.d) {
					t.Fatalf("MayAnswer refuses %s", p.person)
				}
				o, err := a.act(q, p.d)
				if err != nil {
					t.Fatalf("%s refused: %v", p.person, err)
				}
				var by core.Decider
				if r := o.Question.Resolution; r != nil {
					by = r.Decider
				} else if len(o.Question.Votes) > 0 {
					by = o.Question.Votes[0].Decider
				}
				if by.Person != p.person {
					t.Fatalf("recorded as %+v, want person %s", by, p.person)
				}
				other := ask(a.quorum)
				if _, err := a.act(other, stranger); core.ErrorCode(err) != core.CodeForbidden {
					t.Fatalf("a stranger's %s: %v", a.name, err)
				}
				kinds := coretest.Kinds(coretest.EventsOf(t, st, other.ID))
				if kinds[len(kinds)-1] != core.EventRefused {
					t.Fatalf("the stranger's %s left events %v", a.name, kinds)
				}
			})
		}
	}
}

// TestRevokeByAPersonsAccount: a revoke is recorded as the person whose
// account revoked it (their actor, their configured name), and a second
// revoke is told there is no such standing approval.
func TestRevokeByAPersonsAccount(t *testing.T) {
	svc, st := coretest.Open(t, coretest.Options{
		People: map[string]core.Person{"ops": {DisplayName: "Olga Ops", IDs: ids("console", "olga-token", "api", "olga-cli")}},
	})
	ctx := t.Context()
	q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Write?",
		Reversibility: core.Reversible, Tool: "write", Arguments: json.RawMessage(`{"path":"a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	o, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ci"},
		OptionID: core.ApproveOption, Standing: &core.StandingRequest{Scope: core.StandingRun}})
	if err != nil || o.Standing == nil {
		t.Fatalf("grant: %+v, %v", o.Standing, err)
	}
	by := core.Decider{Surface: core.SurfaceConsole, ID: "olga-token", Name: "olga-token"}
	if _, err := svc.RevokeStanding(ctx, o.Standing.ID, by); err != nil {
		t.Fatal(err)
	}
	evs := coretest.EventsOf(t, st, q.ID)
	last := evs[len(evs)-1]
	person := core.Pseudonym([]byte(coretest.ActorKey), core.Decider{Surface: core.SurfaceAPI, ID: "olga-cli", Person: "ops"})
	if last.Kind != core.EventStandingRevoked || last.Actor != person || !strings.Contains(last.Reason, "Olga Ops") {
		t.Fatalf("the revoke was recorded as %+v, want person ops's actor and name", last)
	}
	_, err = svc.RevokeStanding(ctx, o.Standing.ID, by)
	if core.ErrorCode(err) != core.CodeNotFound || !strings.Contains(core.ErrorMessage(err), "no standing approval "+o.Standing.ID) {
		t.Fatalf("a second revoke: %v", err)
	}
}

// TestDMsSayWhereDirectMessagesGo: DMs lists, for each person who asked
// for direct messages, their own surface, then on each route they are
// among the people of, the surface their cards go to there: their own
// when the route lets them answer on it, else the first it does.
func TestDMsSayWhereDirectMessagesGo(t *testing.T) {
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{
		People: map[string]core.Person{
			"alice": {IDs: map[core.Surface][]string{core.SurfaceSlack: {"U1"}, core.SurfaceDiscord: {"42"}}, Prefer: core.SurfaceSlack, DM: true},
			"bob":   {IDs: map[core.Surface][]string{core.SurfaceSlack: {"U2"}}},
		},
		Routes: map[string]core.Route{
			"ops":   {Deciders: map[core.Surface][]string{core.SurfaceDiscord: {"42"}}},
			"infra": {People: []string{"person:alice", "person:bob"}},
			"other": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}},
		},
	})
	want := []core.DM{
		{Person: "alice", Surface: core.SurfaceSlack, Own: true},
		{Person: "alice", Route: "infra", Surface: core.SurfaceSlack, Own: true, Named: true},
		{Person: "alice", Route: "ops", Surface: core.SurfaceDiscord},
	}
	if diff := cmp.Diff(want, svc.DMs()); diff != "" {
		t.Fatalf("DMs (-want +got):\n%s", diff)
	}
}
