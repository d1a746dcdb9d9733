package core_test

import (
	"context"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// reloadingStore runs reload once, at the first read of the kind named:
// a reload landing while an answer is in flight.
type reloadingStore struct {
	core.Store
	onGet, onRead func()
}

func (r *reloadingStore) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	if f := r.onGet; f != nil {
		r.onGet = nil
		f()
	}
	return r.Store.Get(ctx, id)
}

func (r *reloadingStore) ReadToChange(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	if f := r.onRead; f != nil {
		r.onRead = nil
		f()
	}
	return r.Store.ReadToChange(ctx, id)
}

// tokenConfig gives token t1 to owner, and lets route default's people
// group g (members) decide, quorum of them agreeing.
func tokenConfig(owner string, quorum int, members ...string) core.Config {
	people := map[string]core.Person{}
	for _, n := range []string{"alice", "bob", "carol", "mallory"} {
		ids := []string{"t-" + n}
		if n == owner {
			ids = append(ids, "t1")
		}
		people[n] = core.Person{IDs: map[core.Surface][]string{core.SurfaceAPI: ids}}
	}
	return core.Config{ActorKey: []byte(coretest.ActorKey), People: people, Groups: map[string]core.Group{"g": {Members: members}},
		Routes: map[string]core.Route{core.DefaultRoute: {People: []string{"group:g"}, Quorum: quorum}}}
}

func askDeploy(t *testing.T, svc *core.Service) *core.Question {
	t.Helper()
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "ag", RunID: "r1", Text: "Deploy?",
		Reversibility: core.HardToReverse, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestAReloadDuringTheCheckLetsNobodyInThatNeitherFileAllows: who the
// actor is and whether the route lets them in are read from one
// configuration. File A gives t1 to Alice and lets Bob decide; file B
// gives t1 to Mallory and lets Alice and Bob decide: neither lets t1 in.
// Before, a reload between the two readings took t1 as Alice's (A) on a
// route that names her (B), and approved.
func TestAReloadDuringTheCheckLetsNobodyInThatNeitherFileAllows(t *testing.T) {
	a, b := tokenConfig("alice", 0, "bob"), tokenConfig("mallory", 0, "alice", "bob")
	st := &reloadingStore{Store: coretest.OpenStore(t)}
	svc, err := core.New(st, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := askDeploy(t, svc)
	st.onGet = func() {
		if err := svc.Reconfigure(b); err != nil {
			t.Fatal(err)
		}
	}
	o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "t1"}})
	if core.ErrorCode(err) != core.CodeForbidden {
		t.Fatalf("t1's approve across the reload: %+v, %v; want it refused", o.Question, err)
	}
}

// TestAReloadDuringAnAnswerRecordsWhomTheCheckLetIn: the answer records
// the person the chokepoint's check let in, not the one the door read
// before a reload renamed the account. Before, a reload handing t1 from
// Alice to Bob recorded Bob's approve (and, under a quorum, his vote) as
// Alice's, and Alice's own vote was then refused as already counted.
func TestAReloadDuringAnAnswerRecordsWhomTheCheckLetIn(t *testing.T) {
	for _, quorum := range []int{0, 2} {
		st := &reloadingStore{Store: coretest.OpenStore(t)}
		svc, err := core.New(st, tokenConfig("alice", quorum, "alice", "bob", "carol"), nil)
		if err != nil {
			t.Fatal(err)
		}
		q := askDeploy(t, svc)
		st.onRead = func() {
			if err := svc.Reconfigure(tokenConfig("bob", quorum, "alice", "bob", "carol")); err != nil {
				t.Fatal(err)
			}
		}
		o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "t1"}})
		if err != nil {
			t.Fatal(err)
		}
		if quorum == 0 {
			if p := o.Question.Resolution.Decider.Person; p != "bob" {
				t.Errorf("the approve is recorded as %q's; t1 was Bob's when it was checked", p)
			}
			continue
		}
		if len(o.Question.Votes) != 1 || o.Question.Votes[0].Key != "person:bob" {
			t.Fatalf("the vote recorded: %+v; want Bob's", o.Question.Votes)
		}
		if o, err := svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, OptionID: core.ApproveOption, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "t-alice"}}); err != nil || !o.Closed {
			t.Errorf("Alice's own vote after: closed %v, %v; want it to close the sign-off", o.Closed, err)
		}
	}
}
