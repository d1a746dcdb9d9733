package formreply_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/formreply"
	"github.com/askbridge/askbridge/core"
)

// TestItem: a reply answers the first item without an answer when it
// was written; an answer given after that by someone else (or in the
// reply's own millisecond, askbridge's time's grain) leaves that item the
// reply's, and one the replier gave, whenever askbridge's clock says,
// does not.
func TestItem(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	alice := core.Decider{Surface: core.SurfaceSlack, ID: "U0ALICE"}
	bob := core.Decider{Surface: core.SurfaceSlack, ID: "U0BOB"}
	aliceElsewhere := core.Decider{Surface: core.SurfaceTeams, ID: "U0ALICE"}
	q := &core.Question{Kind: core.KindForm, Items: []core.FormItem{{ID: "day"}, {ID: "notes"}, {ID: "owner"}}}
	answered := func(by core.Decider, at time.Time) []core.ItemAnswer {
		return []core.ItemAnswer{{ItemID: "day", OptionID: "mon", Decider: by, At: at}}
	}
	for _, c := range []struct {
		name    string
		answers []core.ItemAnswer
		at      time.Time
		want    int
	}{
		{"nothing answered", nil, t0, 0},
		{"answered before the reply", answered(bob, t0.Add(-time.Second)), t0, 1},
		{"answered by another after the reply", answered(bob, t0.Add(time.Second)), t0, 0},
		{"answered by another in the reply's millisecond", answered(bob, t0), t0.Add(700 * time.Microsecond), 0},
		{"answered by another the millisecond before", answered(bob, t0), t0.Add(time.Millisecond), 1},
		{"answered by the replier, on a clock ahead", answered(alice, t0.Add(time.Minute)), t0, 1},
		{"the same id on another surface is another account", answered(aliceElsewhere, t0.Add(time.Second)), t0, 0},
		{"no time known: now", answered(bob, t0.Add(time.Hour)), time.Time{}, 1},
		{"all answered", []core.ItemAnswer{{ItemID: "day"}, {ItemID: "notes"}, {ItemID: "owner"}}, t0, 0},
	} {
		q.Answers = c.answers
		if got := formreply.Item(q, alice, c.at); got != c.want {
			t.Errorf("%s: item %d, want %d", c.name, got, c.want)
		}
	}
}
