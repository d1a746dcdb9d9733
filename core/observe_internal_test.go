package core

import "testing"

// TestNextsPartConflictsAreLostRaces: the conflicts Next itself finds in
// a transition (a part answered already, a voter counted already), which
// no door's build lets through but a build racing a change could, are
// lost races as the builds' own are (observe_test.go), and no invalid
// input.
func TestNextsPartConflictsAreLostRaces(t *testing.T) {
	for name, tt := range map[string]struct {
		q *Question
		t Transition
	}{
		"a part answered already": {seed(KindForm, answered("day", "mon", apiBob)),
			Transition{Items: []ItemAnswer{{ItemID: "day", OptionID: "fri", Decider: apiAda}}, Resolution: &Resolution{State: StateAnswered, Decider: apiAda}}},
		"a voter counted already": {seed(KindApproval, quorumOn("two"), voted("person:alice", ApproveOption, slackAlice)),
			Transition{Vote: &Vote{Key: "person:alice", Choice: ApproveOption}, Needed: 2, Resolution: &Resolution{State: StateAnswered}}},
	} {
		tt.t.QuestionID, tt.t.Now = tt.q.ID, nextNow
		_, err := Next(tt.q, tt.t)
		if got := resolveResult(Outcome{}, err); ErrorCode(err) != CodeConflict || got != ResolveLost {
			t.Errorf("%s: Next says %v, observed as %q; want a conflict observed as %q", name, err, got, ResolveLost)
		}
	}
}
