package teams_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
)

// groupChat is a group chat's conversation id: no channel, no threads.
const groupChat = "19:chat0000000000000000000000000000@thread.v2"

// TestChatsAreToldHowToAnswer: a personal or group chat has no threads,
// so a card that takes text there does not ask for a reply in its
// thread; it says to answer on the card. A message written in the chat
// records nothing, and its writer is told how to answer instead of being
// left waiting: in their personal chat with the bot, where a group
// chat's other members do not read it. Before, the card asked for a
// thread reply and the reply was dropped without a word. A channel's
// card still takes replies in its thread.
func TestChatsAreToldHowToAnswer(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Route: "alice-dm", Text: "Which region?", Reversibility: core.Reversible})
	dm := e.recorded(q.ID, core.DMRoom(aliceAAD))
	group := e.posted(q.ID, groupChat)
	for _, m := range []teamsfake.Message{dm, group} {
		if c := string(m.Card); strings.Contains(c, "thread") || !strings.Contains(c, "not recorded") {
			t.Fatalf("the card in %s:\n%s", m.Conversation, c)
		}
	}
	// In a group chat, the members' talk among themselves (which a bot
	// with consent to read every chat message receives) gets no note.
	if status, _, err := e.fake.Deliver(e.fake.ReplyActivity(bob, groupChat, "lunch?"), ""); err != nil || status != http.StatusOK {
		t.Fatalf("message: %d %v", status, err)
	}
	for _, c := range []struct {
		u          teamsfake.User
		conv, told string
	}{{alice, dm.Conversation, dm.Conversation}, {bob, groupChat, teamsfake.PersonalChat(bob.ID)}} {
		act := e.fake.ReplyActivity(c.u, c.conv, "eu-west-1")
		if c.conv == groupChat {
			act = e.fake.MentioningBot(act) // what reaches a bot in a group chat
		}
		if status, _, err := e.fake.Deliver(act, ""); err != nil || status != http.StatusOK {
			t.Fatalf("message: %d %v", status, err)
		}
		if !e.toldIn(c.told, "not recorded") {
			t.Fatalf("%s was told nothing after writing in %s", c.u.Name, c.conv)
		}
	}
	if got := e.get(q.ID); !got.Open() {
		t.Fatalf("a message in a chat answered: %s", got.State)
	}
	if n := e.notesIn(teamsfake.PersonalChat(bob.ID)); n != 1 {
		t.Fatalf("bob was told %d times, want once: for the message that named the bot, not for talk in the chat", n)
	}
	channelCard := e.card(e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which zone?", Reversibility: core.Reversible}).ID, nil)
	if !strings.Contains(string(channelCard.Card), "reply in this card's thread") {
		t.Fatalf("the channel's card no longer takes thread replies:\n%s", channelCard.Card)
	}
}

// notesIn counts the notes (messages without a card) in conversation conv.
func (e *env) notesIn(conv string) int {
	n := 0
	for _, x := range e.fake.Messages() {
		if x.Conversation == conv && x.Card == nil {
			n++
		}
	}
	return n
}

// toldIn waits until a note holding words is in conversation conv.
func (e *env) toldIn(conv, words string) bool {
	return e.fake.Wait(5*time.Second, func() bool {
		for _, x := range e.fake.Messages() {
			if x.Conversation == conv && x.Card == nil && strings.Contains(x.Text, words) {
				return true
			}
		}
		return false
	})
}
