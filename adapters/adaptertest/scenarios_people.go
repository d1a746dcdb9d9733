package adaptertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// 11. a route that names people alone: a member answers with their
// account on this surface, the card and the record show the configured
// name (not the platform's), the agent gets it fenced, and a stranger is
// refused.
func peopleByName(t *testing.T, w *world) {
	q := w.askOn(TeamRoute, decision())
	waiting := w.wait(q.ID)
	c := w.card(q.ID)
	note := w.d.Click(t, w.d.Stranger(), c, w.button(c, core.RefOption, -1, 0))
	if !strings.Contains(note, "not one of the people who may answer") {
		t.Fatalf("the stranger was told %q", note)
	}
	w.d.Click(t, w.d.Allowed2(), c, w.button(c, core.RefOption, -1, 1))
	res := w.woken(waiting)
	got := w.get(q.ID)
	d := got.Resolution.Decider
	if res.State != core.StateAnswered || d.Person != "bob" || d.Name != TeamBob || d.ID != w.apiID(w.d.Allowed2()) {
		t.Fatalf("recorded %+v, want person bob as %q", d, TeamBob)
	}
	if !strings.Contains(res.Resume.Text, TeamBob) {
		t.Fatalf("the agent was not told who answered:\n%s", res.Resume.Text)
	}
	w.closedCard(q.ID, TeamBob, "DynamoDB")
}

// 12. an approval that needs two people: the first vote is recorded and
// shown on the card, a second click by the same person is told it
// already counted, the second person's vote closes it, and the agent
// hears who voted what; the DM copy shows the outcome too.
func quorumOfTwo(t *testing.T, w *world) {
	q := w.askOn(TeamRoute, client.AskRequest{Kind: core.KindApproval, Question: "Drop the staging table?",
		Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`), Quorum: 2})
	waiting := w.wait(q.ID)
	c := w.card(q.ID)
	a, b := w.d.Allowed(), w.d.Allowed2()
	// Alice's DM copy is out before anyone votes: a one-way door (email,
	// ntfy) sends no copy once the question is closed, so only a copy
	// that went out can show the outcome.
	w.d.DM(t, a, q.ID, nil)
	// A platform that edits the card in place for the clicker (Discord)
	// tells them nothing privately; the card below shows the vote.
	if note := w.d.Click(t, a, c, w.button(c, core.RefApprove, -1, 0)); note != "" && !strings.Contains(note, "Recorded your vote") {
		t.Fatalf("the first voter was told %q", note)
	}
	half := w.d.Card(t, q.ID, func(c Card) bool {
		return len(c.Buttons) > 0 && strings.Contains(c.Text, "1 of 2 approvals: "+TeamAlice)
	})
	if note := w.d.Click(t, a, half, w.button(half, core.RefApprove, -1, 0)); !strings.Contains(note, "already counted") {
		t.Fatalf("a second vote by the same person was told %q", note)
	}
	w.d.Click(t, b, half, w.button(half, core.RefApprove, -1, 0))
	res := w.woken(waiting)
	if res.State != core.StateAnswered || res.Resume.Structured.Approved == nil || !*res.Resume.Structured.Approved ||
		len(res.Resume.Structured.Votes) != 2 {
		t.Fatalf("the agent woke with %+v", res.Resume)
	}
	for _, name := range []string{TeamAlice, TeamBob} {
		if !strings.Contains(res.Resume.Text, name) {
			t.Fatalf("the resume does not say %s voted:\n%s", name, res.Resume.Text)
		}
	}
	w.closedCard(q.ID, "2 of 2 approvals", TeamAlice, TeamBob)
	w.d.DM(t, a, q.ID, func(c Card) bool { return len(c.Buttons) == 0 && strings.Contains(c.Text, "2 of 2 approvals") })
}

// 13. a person who takes DMs gets the card there too; an hour on, the
// room is reminded, calling on both people by their accounts; a click in
// the DM closes the question, and the room's card and the DM are edited.
func dmAndReminders(t *testing.T, w *world) {
	q := w.askOn(TeamRoute, decision())
	waiting := w.wait(q.ID)
	w.card(q.ID)
	a, b := w.d.Allowed(), w.d.Allowed2()
	dm := w.d.DM(t, a, q.ID, nil)
	w.clock.Advance(time.Hour)
	// A reminder calls on each person: by their account, which a chat
	// platform turns into a mention; on a one-way door by their name, as
	// an address or a topic is theirs alone (core.Surface.RoomIsPersonal).
	callsOn := func(p Post, u User, name string) bool {
		if w.d.Surface().RoomIsPersonal() {
			return strings.Contains(p.Text, name)
		}
		return strings.Contains(p.Raw, u.ID)
	}
	w.d.Posts(t, func(ps []Post) bool {
		for _, p := range ps {
			if strings.Contains(p.Text, card.ReminderHeading) && callsOn(p, a, TeamAlice) && callsOn(p, b, TeamBob) {
				return true
			}
		}
		return false
	})
	w.d.Click(t, a, dm, w.button(dm, core.RefOption, -1, 1))
	if res := w.woken(waiting); res.State != core.StateAnswered || res.Resume.Structured.ChosenOptionID != "ddb" {
		t.Fatalf("after a click in the DM the agent woke with %+v", res)
	}
	w.closedCard(q.ID, TeamAlice, "DynamoDB")
	w.d.DM(t, a, q.ID, func(c Card) bool { return len(c.Buttons) == 0 && strings.Contains(c.Text, "DynamoDB") })
}

// 17. every act a card offers, on a route that names people alone (alice
// by person:, bob by group:, no account): approve, deny, edit and
// approve, decline, and an approve that grants a standing approval each
// count from the person's account on this surface and are recorded as
// that person. (Votes by name: 12.)
func everyActByName(t *testing.T, w *world) {
	a, b := w.d.Allowed(), w.d.Allowed2()
	n := 0
	approval := func() *client.AgentQuestion {
		n++
		return w.askOn(TeamRoute, client.AskRequest{Kind: core.KindApproval, Question: "Write the report?",
			ToolCallID: fmt.Sprintf("toolu_team%d", n), Reversibility: core.Reversible, Tool: "write_file",
			Arguments: json.RawMessage(`{"path":"/srv/report.txt"}`), Editable: &core.Editable{Keys: []string{"path"}}})
	}
	yes, no := true, false
	for _, c := range []struct {
		act      string
		u        User
		person   string
		do       func(u User, c Card)
		state    core.State
		approved *bool
	}{
		{"approve", a, "alice", func(u User, c Card) { w.d.Click(t, u, c, w.button(c, core.RefApprove, -1, 0)) }, core.StateAnswered, &yes},
		{"deny", b, "bob", func(u User, c Card) { w.d.Deny(t, u, c, w.button(c, core.RefDeny, -1, 0)) }, core.StateAnswered, &no},
		{"edit and approve", a, "alice", func(u User, c Card) {
			if _, told := w.d.Edit(t, u, c, w.button(c, core.RefEdit, -1, 0), `{"path":"/srv/other.txt"}`); strings.Contains(told, "not one of") {
				t.Fatalf("alice's edit was told %q", told)
			}
		}, core.StateAnswered, &yes},
		{"edit and approve", b, "bob", func(u User, c Card) {
			if _, told := w.d.Edit(t, u, c, w.button(c, core.RefEdit, -1, 0), `{"path":"/srv/other.txt"}`); strings.Contains(told, "not one of") {
				t.Fatalf("bob's edit was told %q", told)
			}
		}, core.StateAnswered, &yes},
		{"decline", a, "alice", func(u User, c Card) { w.d.Click(t, u, c, w.button(c, core.RefDecline, -1, 0)) }, core.StateDeclined, nil},
		// Last: the grant covers this tool for the rest of the run.
		{"grant a standing approval", b, "bob", func(u User, c Card) { w.d.Click(t, u, c, w.button(c, core.RefStanding, -1, 0)) }, core.StateAnswered, &yes},
	} {
		q := approval()
		waiting := w.wait(q.ID)
		c.do(c.u, w.card(q.ID))
		res := w.woken(waiting)
		got := w.get(q.ID).Resolution
		if res.State != c.state || got == nil || got.Decider.Person != c.person || got.Decider.ID != w.apiID(c.u) {
			t.Fatalf("%s by %s: the agent woke %s; recorded %+v, want person %s", c.act, c.person, res.State, got, c.person)
		}
		if c.approved != nil && (res.Resume.Structured.Approved == nil || *res.Resume.Structured.Approved != *c.approved) {
			t.Fatalf("%s by %s: the agent woke with %+v", c.act, c.person, res.Resume.Structured)
		}
		if strings.HasPrefix(c.act, "edit") && (got.Edit == nil || !res.Resume.Structured.Edited) {
			t.Fatalf("%s by %s: recorded %+v, with no edit", c.act, c.person, got)
		}
	}
	list, err := w.ops.Standing(t.Context())
	if err != nil || len(list) != 1 || list[0].GrantedBy.Person != "bob" {
		t.Fatalf("standing approvals: %+v, %v; want one granted by bob", list, err)
	}
	if next := approval(); next.State != core.StateAnswered || next.Resolution == nil || next.Resolution.StandingID != list[0].ID {
		t.Fatalf("the next ask came back %s, not covered by bob's standing approval", next.State)
	}
}
