package slack

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// TestAnsweredBy: a revised reply is its writer's recorded free-text
// answer when its words before the change are that answer's, or, edited
// before, when it was written by the time the answer was recorded; a form
// item's and a vote's answers count as a clarification's does. Another
// person's answer, an option chosen, another surface's account of the
// same id, and a reply written after the answer do not.
func TestAnsweredBy(t *testing.T) {
	alice := core.Decider{Surface: core.SurfaceSlack, ID: "U0ALICE"}
	bob := core.Decider{Surface: core.SurfaceSlack, ID: "U0BOB"}
	clar := func(by core.Decider) *core.Question {
		q := base(core.KindClarification)
		q.State = core.StateAnswered
		q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: by, At: t0, Answer: "eu-west-1"}
		return q
	}
	form := func(option string, by core.Decider) *core.Question {
		q := base(core.KindForm)
		q.Answers = []core.ItemAnswer{{ItemID: "day", OptionID: option, Text: "eu-west-1", Decider: by, At: t0}}
		return q
	}
	voted := base(core.KindClarification)
	voted.Votes = []core.Vote{{Key: "slack:U0ALICE", Text: "eu-west-1", Decider: alice, At: t0}}
	rev := func(was string, written time.Time, editedBefore bool) revision {
		return revision{user: alice.ID, was: was, written: written, editedBefore: editedBefore}
	}
	for _, c := range []struct {
		name string
		q    *core.Question
		r    revision
		want bool
	}{
		{"the answer's words", clar(alice), rev("eu-west-1", t0.Add(-time.Second), false), true},
		{"other words", clar(alice), rev("thanks", t0.Add(-time.Second), false), false},
		{"edited before, written before the answer", clar(alice), rev("us-east-1", t0.Add(-time.Second), true), true},
		{"edited before, written after the answer", clar(alice), rev("us-east-1", t0.Add(time.Minute), true), false},
		{"edited before, no time", clar(alice), rev("us-east-1", time.Time{}, true), false},
		{"someone else's answer", clar(bob), rev("eu-west-1", t0, false), false},
		{"the same id on another surface", clar(core.Decider{Surface: core.SurfaceTeams, ID: alice.ID}), rev("eu-west-1", t0, false), false},
		{"a form item's own answer", form("", alice), rev("eu-west-1", t0, false), true},
		{"a form item's option", form("mon", alice), rev("eu-west-1", t0, false), false},
		{"a vote's text", voted, rev("eu-west-1", t0, false), true},
	} {
		if got := answeredBy(c.q, c.r); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
