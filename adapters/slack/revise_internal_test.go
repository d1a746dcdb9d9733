package slack

import (
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

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

// TestRevisionOf: an edit that changes a person's thread reply, or its
// deletion, is a revision, read as onReply reads the reply (unescaped,
// trimmed), edited before or not; Slack's own edit that keeps the words,
// another subtype, and what is no person's reply in a thread of ours (a
// bot's, our own, a thread's root, a message in no thread, a reply under
// someone else's message, one with no words) are none.
func TestRevisionOf(t *testing.T) {
	a := &Adapter{}
	me := "U0BOT"
	a.botUser.Store(&me)
	reply := func() slack.Msg {
		return slack.Msg{User: "U0ALICE", Text: " a &lt; b ", Timestamp: "1700000010.000100",
			ThreadTimestamp: "1700000000.000100", ParentUserId: me}
	}
	event := func(subtype string, prev func(*slack.Msg), text string) *slackevents.MessageEvent {
		p := reply()
		if prev != nil {
			prev(&p)
		}
		ev := &slackevents.MessageEvent{Channel: "C0ROOM", SubType: subtype, PreviousMessage: &p}
		if subtype == "message_changed" {
			ev.Message = &slack.Msg{Text: text}
		}
		return ev
	}
	for _, c := range []struct {
		name string
		ev   *slackevents.MessageEvent
		want *revision
	}{
		{"an edit", event("message_changed", nil, "a > b"),
			&revision{user: "U0ALICE", channel: "C0ROOM", threadTS: "1700000000.000100", was: "a < b", written: tsTime("1700000010.000100")}},
		{"an edit of an edited reply", event("message_changed", func(m *slack.Msg) { m.Edited = &slack.Edited{User: "U0ALICE", Timestamp: "1700000020.000100"} }, "a > b"),
			&revision{user: "U0ALICE", channel: "C0ROOM", threadTS: "1700000000.000100", was: "a < b", written: tsTime("1700000010.000100"), editedBefore: true}},
		{"a deletion", event("message_deleted", nil, ""),
			&revision{user: "U0ALICE", channel: "C0ROOM", threadTS: "1700000000.000100", was: "a < b", written: tsTime("1700000010.000100"), deleted: true}},
		{"Slack's own edit, words kept", event("message_changed", nil, "a &lt; b"), nil},
		{"an edit without the message", &slackevents.MessageEvent{SubType: "message_changed", PreviousMessage: &slack.Msg{User: "U0ALICE", Text: "x"}}, nil},
		{"no previous message", &slackevents.MessageEvent{SubType: "message_deleted"}, nil},
		{"another subtype", event("thread_broadcast", nil, ""), nil},
		{"a bot's reply", event("message_deleted", func(m *slack.Msg) { m.BotID = "B0OTHER" }, ""), nil},
		{"our own reply", event("message_deleted", func(m *slack.Msg) { m.User = me }, ""), nil},
		{"no writer", event("message_deleted", func(m *slack.Msg) { m.User = "" }, ""), nil},
		{"a thread's root", event("message_deleted", func(m *slack.Msg) { m.Timestamp = m.ThreadTimestamp }, ""), nil},
		{"in no thread", event("message_deleted", func(m *slack.Msg) { m.ThreadTimestamp = "" }, ""), nil},
		{"under someone else's message", event("message_deleted", func(m *slack.Msg) { m.ParentUserId = "U0BOB" }, ""), nil},
		{"no words", event("message_deleted", func(m *slack.Msg) { m.Text = "  " }, ""), nil},
	} {
		got, ok := a.revisionOf(c.ev)
		switch {
		case c.want == nil && ok:
			t.Errorf("%s: a revision %+v", c.name, got)
		case c.want != nil && (!ok || got != *c.want):
			t.Errorf("%s: %+v (%v), want %+v", c.name, got, ok, *c.want)
		}
	}
}
