package teams_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
)

// marked reports whether activity act was marked seen: the adapter keys
// it by conversation and id (teams:activity:<conv>:<id>). Asking marks
// it, so each activity is asked about once.
func (e *env) marked(act map[string]any) bool {
	e.t.Helper()
	conv := act["conversation"].(map[string]any)["id"].(string)
	return !e.svc.FirstSeen(e.t.Context(), "teams:activity:"+conv+":"+act["id"].(string), time.Hour)
}

// TestOnlyActivitiesThatMayActAreMarkedSeen: with consent to read every
// channel message, the Bot Connector sends the bot all the talk in its
// channels and chats; only what may act (a click, a reply that may
// answer a question, a message the bot answers with a note) is marked
// seen. Before, every activity was, each a store write (a disk sync on
// the embedded store) kept for two hours.
func TestOnlyActivitiesThatMayActAreMarkedSeen(t *testing.T) {
	e := newEnv(t)
	clar := e.card(e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible}).ID, nil)
	appr := e.card(e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)}).ID, nil)
	for name, act := range map[string]map[string]any{
		"a new post in the channel":            e.fake.ReplyActivity(bob, channel+";messageid=1690000000001", "standup in 5"),
		"a reply in a thread tied to nothing":  e.fake.ReplyActivity(bob, channel+";messageid=1690000000002", "+1"),
		"a reply in an approval's thread":      e.fake.ReplyActivity(bob, appr.Conversation, "looks fine to me"),
		"talk in a group chat":                 e.fake.ReplyActivity(bob, groupChat, "lunch?"),
		"a message with no text in the thread": e.fake.ReplyActivity(bob, clar.Conversation, " "),
	} {
		e.deliver(act)
		if e.marked(act) {
			t.Errorf("%s was marked seen", name)
		}
	}
	for name, act := range map[string]map[string]any{
		"a reply in a clarification's thread": e.fake.ReplyActivity(alice, clar.Conversation, "eu-west-1"),
		"a message in a personal chat":        e.fake.ReplyActivity(alice, teamsfake.PersonalChat(alice.ID), "hi"),
		"a click":                             e.fake.ExecuteActivity(bob, appr, teams.Verb, map[string]any{}),
	} {
		e.deliver(act)
		if !e.marked(act) {
			t.Errorf("%s was not marked seen: a second copy would act again", name)
		}
	}
}
