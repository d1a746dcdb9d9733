package hooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/core"
)

// TestADenyQuotesOnlyTheVotesThatCounted: the message a host shows its
// model after a quorum's deny quotes the deny votes that counted, as the
// resume does, not one a reload discounted.
func TestADenyQuotesOnlyTheVotesThatCounted(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	no := false
	alice := core.Decider{Surface: core.SurfaceAPI, ID: "alice", Person: "alice"}
	bob := core.Decider{Surface: core.SurfaceAPI, ID: "bob", Person: "bob"}
	cat := core.Decider{Surface: core.SurfaceAPI, ID: "cat", Person: "cat"}
	q := &core.Question{ID: "qzz", Kind: core.KindApproval, Quorum: 2, State: core.StateAnswered,
		Votes: []core.Vote{
			{Key: "person:alice", Choice: core.DenyOption, Text: "ALICE-WORDS (her vote no longer counts)", Decider: alice, At: at},
			{Key: "person:bob", Choice: core.DenyOption, Text: "bob says no", Decider: bob, At: at.Add(time.Minute), Discounted: []string{"person:alice"}},
			{Key: "person:cat", Choice: core.DenyOption, Decider: cat, At: at.Add(2 * time.Minute), Discounted: []string{"person:alice"}},
		},
		Resolution: &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserQuorum, Decider: cat, At: at.Add(2 * time.Minute), Approved: &no}}
	d := hooks.Decide(hooks.Prompt{Host: hooks.ClaudeCode, Event: hooks.PermissionRequest, Tool: "Bash"}, q, nil)
	if !strings.Contains(d.Message, "bob says no") || strings.Contains(d.Message, "ALICE-WORDS") {
		t.Errorf("the deny message quotes a vote that did not count, or leaves out one that did:\n%s", d.Message)
	}
}
