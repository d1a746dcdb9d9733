package core_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestDenyCountClosesOnceApprovalCannotReachTheQuorum: under deny:
// count, a reload that takes people off the route lowers the deny
// threshold below the denies already in; the next vote, an approve
// included, closes the question denied, since approval can no longer
// reach the quorum. Before, only a further deny closed it: carol's
// approve was counted towards a quorum nobody left could reach, and the
// question stayed open to its deadline. Without the reload, dave could
// still approve with carol, and carol's approve leaves it open.
func TestDenyCountClosesOnceApprovalCannotReachTheQuorum(t *testing.T) {
	f := newRemovedVoter(t, removedVoterConfig(true, "alice", "bob", "carol", "dave"))
	f.vote("alice", core.DenyOption)
	f.vote("bob", core.DenyOption) // two of the three denies that four people, quorum two, need
	f.reload(removedVoterConfig(true, "alice", "bob", "carol"))
	o := f.vote("carol", core.ApproveOption)
	r := o.Question.Resolution
	if !o.Closed || r == nil || r.Approved == nil || *r.Approved || core.CloserOf(o.Question) != core.CloserQuorum {
		t.Fatalf("carol's approve, with two denies of three people and a quorum of two: closed %v, %+v", o.Closed, r)
	}
	if line := card.OutcomeLine(o.Question); !strings.Contains(strings.ToLower(line), "denied") {
		t.Errorf("the card's outcome: %q", line)
	}
	// A late vote is told the denies closed it, the last of them by bob:
	// carol approved, and her vote was not one of them.
	_, err := f.svc.Answer(t.Context(), core.AnswerInput{QuestionID: f.q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "alice-tok"}, OptionID: core.DenyOption})
	if err == nil || !strings.Contains(err.Error(), "2 denies (the last by ") || strings.Contains(err.Error(), "carol") {
		t.Errorf("the late vote was told %v; want the two denies, the last not carol's", err)
	}

	still := newRemovedVoter(t, removedVoterConfig(true, "alice", "bob", "carol", "dave"))
	still.vote("alice", core.DenyOption)
	still.vote("bob", core.DenyOption)
	if o := still.vote("carol", core.ApproveOption); o.Closed {
		t.Fatalf("closed by carol's approve while dave could still approve with her: %q", card.OutcomeLine(o.Question))
	}
}
