package core_test

import (
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// A quorum counts votes only on the kinds that take votes: a batch, asked
// on a route that needs two people, is decided call by call and takes no
// quorum, so its card shows no tally that no vote could ever move; asked
// for a quorum of its own, it is refused.
func TestABatchTakesNoQuorum(t *testing.T) {
	routes := coretest.APIRoutes()
	r := routes[core.DefaultRoute]
	r.Quorum, r.MaxQuorum = 2, 3
	routes[core.DefaultRoute] = r
	svc, _ := coretest.Open(t, coretest.Options{Routes: routes})
	q, err := svc.Ask(t.Context(), batchAsk())
	if err != nil {
		t.Fatal(err)
	}
	if q.Quorum > 1 || core.TallyOf(q) != nil {
		t.Errorf("a batch on a route of quorum 2 has quorum %d, tally %+v", q.Quorum, core.TallyOf(q))
	}
	in := batchAsk()
	in.RunID, in.Quorum = "run-2", 2
	if _, err := svc.Ask(t.Context(), in); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("a batch asking a quorum of 2: %v, want invalid", err)
	}
	// A single call's approval on the same route still takes it.
	one := core.AskInput{Kind: core.KindApproval, Agent: "agent-a", RunID: "run-3", Text: "Write?", Reversibility: core.Reversible,
		Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)}
	if q, err := svc.Ask(t.Context(), one); err != nil || q.Quorum != 2 {
		t.Errorf("an approval on a route of quorum 2: %+v, %v", q, err)
	}
}
