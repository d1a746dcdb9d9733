package slack_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// An Enterprise Grid organisation: the bot's workspace (slackfake.TeamID)
// is one of its workspaces. A member of another of them meets the bot in
// a channel shared across the organisation; a member of another
// organisation (itself a grid) in a Slack Connect channel.
const ourOrg = "E0OURORG"

var (
	sibling  = slackfake.User{ID: "W0SIBLING", Name: "Sam", Team: "T0SIBLING", Enterprise: ourOrg}
	sibling2 = slackfake.User{ID: "W0SIBLING2", Name: "Sue", Team: "T0SIBLING", Enterprise: ourOrg}
	otherOrg = slackfake.User{ID: "W0OTHER", Name: "Olga", Team: "T0OTHER", Enterprise: "E0OTHERORG"}
)

// TestGridMemberOfAnotherWorkspaceIsOurs: on a route open to "*", a
// member of another workspace of the bot's own Enterprise Grid
// organisation answers by a thread reply as by a click. Slack names the
// organisation (E…) as a click's user.team_id but their own workspace
// (T…) as a message's user_team; before, the reply was refused as from
// another organisation ("not one of the people who may answer") while
// the same person's click counted (law 6). A member of another
// organisation is still refused both ways.
func TestGridMemberOfAnotherWorkspaceIsOurs(t *testing.T) {
	e := newStarEnv(t, func(f *slackfake.Fake) {
		f.SetEnterprise(ourOrg)
		f.AddUser(sibling)
		f.AddUser(sibling2)
		f.AddUser(otherOrg)
	})
	approval := func() (*core.Question, slackfake.Message) {
		q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop prod?", Tool: "sql", Arguments: json.RawMessage(`{"q":"drop"}`)})
		return q, e.card(q.ID)
	}

	// Another organisation: refused, by click and by reply.
	q, m := approval()
	e.click(otherOrg, m, button(t, m, core.RefApprove, -1, 0))
	if note := e.note(otherOrg, 0); note != notADecider {
		t.Fatalf("another organisation's clicker was told %q", note)
	}
	c := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	cm := e.card(c.ID)
	e.reply(otherOrg, cm, "eu-west-1", 0)
	if note := e.note(otherOrg, 1); note != notADecider {
		t.Fatalf("another organisation's replier was told %q", note)
	}
	if e.get(q.ID).State != core.StateOpen || e.get(c.ID).State != core.StateOpen {
		t.Fatal("a member of another organisation answered through \"*\"")
	}

	// Our organisation's other workspace: counts, by reply and by click.
	e.reply(sibling, cm, "eu-west-2", 0)
	if got := e.get(c.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != sibling.ID {
		t.Errorf("the sibling workspace's reply: %s %+v, told %q", got.State, got.Resolution, e.note(sibling, 0))
	}
	e.click(sibling, m, button(t, m, core.RefApprove, -1, 0))
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != sibling.ID {
		t.Errorf("the sibling workspace's click: %s %+v, told %q", got.State, got.Resolution, e.note(sibling, e.notesTo(sibling)-1))
	}
	// Whose organisation users.info cannot say just then is neither
	// refused nor let in: told to try again, nothing recorded.
	c2 := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which zone?"})
	cm2 := e.card(c2.ID)
	for range 2 { // the display name's read, then the organisation's
		e.fake.FailNext("users.info", slackfake.Failure{Error: "internal_error"})
	}
	e.reply(sibling2, cm2, "b", 0)
	if note := e.note(sibling2, 0); note != "askbridge could not record that just now; please try again." {
		t.Errorf("a member whose organisation could not be read was told %q", note)
	}
	if got := e.get(c2.ID); got.State != core.StateOpen {
		t.Errorf("a member whose organisation could not be read: %s", got.State)
	}
	e.reply(sibling2, cm2, "b", 0)
	if got := e.get(c2.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != sibling2.ID {
		t.Errorf("the retried reply: %s %+v", got.State, got.Resolution)
	}

	// One refusal each, the other organisation's (law 8): none of ours.
	for _, id := range []core.QuestionID{q.ID, c.ID, c2.ID} {
		evs, err := e.svc.QuestionEvents(t.Context(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, ev := range evs {
			if ev.Kind == core.EventRefused {
				refused++
			}
		}
		if want := map[core.QuestionID]int{q.ID: 1, c.ID: 1}[id]; refused != want {
			t.Errorf("%s: %d refused events; want %d (the other organisation's alone)", id, refused, want)
		}
	}
}

// TestGridMemberUsersInfoRefusesForGoodIsRefused: on a route open to "*",
// a person of another workspace whose organisation users.info will never
// tell (Slack answers user_not_found or user_not_visible, or a code it
// documents as permanent for the app's token) is refused as not one of
// the deciders, and the refusal is recorded (law 8). Before, they were
// told "try again" on every reply, and nothing was recorded. A failure
// that may pass (ratelimited, a 503) is still "try again", nothing
// recorded. (A click needs no users.info: its user.team_id names the
// organisation.)
func TestGridMemberUsersInfoRefusesForGoodIsRefused(t *testing.T) {
	e := newStarEnv(t, func(f *slackfake.Fake) {
		f.SetEnterprise(ourOrg)
		f.AddUser(sibling)
	})
	const tryAgain = "askbridge could not record that just now; please try again."
	refusals := func(id core.QuestionID) int {
		evs, err := e.svc.QuestionEvents(t.Context(), id, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ev := range evs {
			if ev.Kind == core.EventRefused {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		fail    slackfake.Failure
		refused bool
	}{
		{slackfake.Failure{Error: "user_not_found"}, true},
		{slackfake.Failure{Error: "user_not_visible"}, true},
		{slackfake.Failure{Error: "missing_scope"}, true},
		{slackfake.Failure{Error: "ratelimited"}, false},
		{slackfake.Failure{Status: http.StatusServiceUnavailable}, false},
	} {
		q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which zone?"})
		m := e.card(q.ID)
		for range 2 { // the display name's read, then the organisation's
			e.fake.FailNext("users.info", c.fail)
		}
		before := e.notesTo(sibling)
		e.reply(sibling, m, "b", 0)
		want := tryAgain
		if c.refused {
			want = notADecider
		}
		if note := e.note(sibling, before); note != want {
			t.Errorf("%+v: the replier was told %q; want %q", c.fail, note, want)
		}
		if got := e.get(q.ID); got.State != core.StateOpen {
			t.Errorf("%+v: the reply closed the question: %s", c.fail, got.State)
		}
		if n, want := refusals(q.ID), map[bool]int{true: 1}[c.refused]; n != want {
			t.Errorf("%+v: %d refused events; want %d", c.fail, n, want)
		}
	}
}
