package topology_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
)

// durable asks and answers with durable acknowledgements on, and checks
// that the moment each call returns, the replica of the primary that
// holds the question already has it as it was told: the wait went to the
// node that ran the script, on its connection.
func durable(t *testing.T, h *harness, replicaOf func(key string) *redistest.Server) {
	st := h.Open(t)
	prefix := h.options(t, st).Prefix
	svc := coretest.Service(t, st, coretest.Options{})
	ctx := t.Context()
	for i := range 10 {
		q, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-durable",
			ToolCallID: fmt.Sprintf("call-%d", i), Text: "Which region?", Reversibility: core.HardToReverse})
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("{%s:s%d}:q:%s", prefix, core.ShardOf(q.ID), q.ID)
		r := replicaOf(key)
		if n, err := r.ReadReplica("EXISTS", key); err != nil || n != "1" {
			t.Fatalf("asked %s, but its replica %s has not got it: %q %v", q.ID, r.Addr(), n, err)
		}
		if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: q.ID,
			Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}, Text: "eu-west-1"}); err != nil {
			t.Fatal(err)
		}
		state, err := r.ReadReplica("HGET", key, "state")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(state, "answered") {
			fields, _ := r.ReadReplica("HKEYS", key)
			t.Fatalf("answered %s, but its replica has state %q (fields %s)", q.ID, state, fields)
		}
	}
}

// maybeRecorded asks for more replicas than there are: every transition
// is recorded on the primary, and its caller is told it may be, with an
// error marked unavailable (the API's 503), never a success.
func maybeRecorded(t *testing.T, h *harness) {
	st := h.Open(t)
	svc := coretest.Service(t, st, coretest.Options{})
	ctx := t.Context()
	in := core.AskInput{Kind: core.KindClarification, Agent: "agent-a", RunID: "run-maybe",
		ToolCallID: "call-1", Text: "Which region?", Reversibility: core.HardToReverse}
	_, err := svc.Ask(ctx, in)
	if !core.Unavailable(err) || !strings.Contains(err.Error(), "may be lost if the primary fails") {
		t.Fatalf("an ask two replicas could not confirm: %v, want a maybe-recorded error", err)
	}
	open, _, err := st.ListOpen(ctx, "", 10)
	if err != nil || len(open) != 1 {
		t.Fatalf("the ask is on the primary: %d open, %v; want 1", len(open), err)
	}
	if _, err := svc.Answer(ctx, core.AnswerInput{QuestionID: open[0].ID,
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada", Name: "Ada"}, Text: "eu-west-1"}); !core.Unavailable(err) {
		t.Fatalf("an answer two replicas could not confirm: %v, want a maybe-recorded error", err)
	}
	// A standing approval changes in a WATCH transaction, not a script.
	grant := core.Standing{ID: "st-1", Scope: core.StandingAgent, Agent: "agent-a", Tool: "Bash", Route: core.DefaultRoute,
		QuestionID: open[0].ID, GrantedAt: time.Now(), Until: time.Now().Add(time.Hour)}
	if err := st.PutStanding(ctx, grant); !core.Unavailable(err) {
		t.Fatalf("a standing approval two replicas could not confirm: %v, want a maybe-recorded error", err)
	}
	if got, err := st.ListStandings(ctx, time.Now()); err != nil || len(got) != 1 {
		t.Fatalf("the standing approval is on the primary: %v %v", got, err)
	}
}
