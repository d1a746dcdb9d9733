package core_test

import (
	"slices"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAReminderSkipsWhoVotedAsTheChokepointCountsThem: a person whose
// vote the chokepoint counts as theirs (VoteOf, and a second vote refused
// as already counted) is not called on by a reminder to vote, nor sent
// one as a direct message: neither after a reload tied the account they
// voted from to them, nor after a reload renamed them. Before, reminders
// read the vote by the name stored with it alone, and nagged a person to
// cast the vote they would then be refused. WaitingOn, which the console
// shows, reads them the same way.
func TestAReminderSkipsWhoVotedAsTheChokepointCountsThem(t *testing.T) {
	for _, tc := range []struct {
		name          string
		voter         string // the voter's name after the reload
		before, after map[string]core.Person
	}{
		{"the account tied to the person by a reload", "alice",
			map[string]core.Person{"alice": {IDs: ids("telegram", "T1"), DM: true}, "bob": {IDs: ids("telegram", "T2")}},
			map[string]core.Person{"alice": {IDs: ids("telegram", "T1", "slack", "U1"), DM: true}, "bob": {IDs: ids("telegram", "T2")}}},
		{"the person renamed by a reload", "asmith",
			map[string]core.Person{"alice": {IDs: ids("telegram", "T1", "slack", "U1"), DM: true}, "bob": {IDs: ids("telegram", "T2")}},
			map[string]core.Person{"asmith": {IDs: ids("telegram", "T1", "slack", "U1"), DM: true}, "bob": {IDs: ids("telegram", "T2")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			cfg := func(people map[string]core.Person) core.Config {
				return core.Config{ActorKey: []byte("k"), People: people, Routes: map[string]core.Route{core.DefaultRoute: {
					Quorum: 2, MaxQuorum: 2,
					Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U1"}, core.SurfaceTelegram: {"T1", "T2"}}}}}
			}
			svc, err := core.New(coretest.OpenStore(t), cfg(tc.before), nil)
			if err != nil {
				t.Fatal(err)
			}
			q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Go?",
				Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
			if err != nil || q.Quorum != 2 {
				t.Fatalf("ask: %+v, %v", q, err)
			}
			if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceSlack, ID: "U1"},
				OptionID: core.ApproveOption}); err != nil {
				t.Fatal(err)
			}
			if err := svc.Reconfigure(cfg(tc.after)); err != nil {
				t.Fatal(err)
			}
			if q, err = svc.Get(ctx, q.ID); err != nil || !q.Open() {
				t.Fatalf("after the vote: %+v, %v", q, err)
			}
			alice := core.Decider{Surface: core.SurfaceTelegram, ID: "T1"}
			if _, voted := svc.VoteOf(q, alice); !voted {
				t.Fatal("VoteOf does not find the vote from the person's Slack account")
			}
			if svc.HasActed(q, alice.Surface, alice.ID) != true {
				t.Error("HasActed: the person who voted from Slack has not acted, on Telegram")
			}
			var called []string
			for _, m := range svc.CallOn(q, core.SurfaceTelegram) {
				called = append(called, m.ID)
			}
			if len(called) != 1 || called[0] != "T2" {
				t.Errorf("a reminder on Telegram calls on %v; want bob (T2) alone", called)
			}
			if w := svc.WaitingOn(q); !slices.Equal(w.People, []string{"bob"}) {
				t.Errorf("the question waits on %v; want bob alone, not %s, whose vote counts", w.People, tc.voter)
			}
		})
	}
}
