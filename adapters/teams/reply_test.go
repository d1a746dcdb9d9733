package teams_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// toldNow reports whether u has been told, in their personal chat, a note
// holding words. A reply's note is sent before its activity is answered,
// so what Deliver returned after is all there is.
func (e *env) toldNow(u teamsfake.User, words string) bool {
	for _, x := range e.fake.Messages() {
		if x.Conversation == teamsfake.PersonalChat(u.ID) && strings.Contains(x.Text, words) {
			return true
		}
	}
	return false
}

// mention is a mention entity of name, whose account id is id.
func mention(name, id string) map[string]any {
	return map[string]any{"type": "mention", "text": "<at>" + name + "</at>", "mentioned": map[string]string{"id": id, "name": name}}
}

// TestReplyKeepsOtherMentions: only the bot's own mention is taken out
// of a thread reply; a colleague named with an @mention stays, as @name.
// Before, the text of every mention was deleted, and "<at>Erin Diaz</at>
// owns it, not <at>Bob Builder</at>" reached the agent as "owns it, not".
func TestReplyKeepsOtherMentions(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Who owns the rollback?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	reply := e.fake.ReplyActivity(alice, m.Conversation, "<at>askbridge</at> <at>Erin Diaz</at> owns it, not <at>Bob Builder</at>")
	reply["entities"] = []any{mention("askbridge", "28:"+appID), mention("Erin Diaz", "29:1erin"), mention("Bob Builder", bob.ID)}
	e.deliver(reply)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "@Erin Diaz owns it, not @Bob Builder" {
		t.Fatalf("recorded %s %+v", got.State, got.Resolution)
	}
}

// TestThreadTieIsPerChannel: a card's thread is tied to its question by
// the channel and the root together, as Teams' message ids are unique
// only within a channel. Before, a reply in another channel's thread
// whose root had the same id answered the question. A tie written the
// old way (by the root alone) still counts in the card's own channel.
func TestThreadTieIsPerChannel(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	m := e.card(q.ID, nil)
	other := "19:random000000000000000000000000@thread.tacv2;messageid=" + m.ID
	e.deliver(e.fake.ReplyActivity(alice, other, "lunch at noon?"))
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("a reply in another channel's thread answered: %+v", got.Resolution)
	}

	old := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which zone?", Reversibility: core.Reversible})
	om := e.card(old.ID, nil)
	// As a card posted before the fix left it: tied by its root alone.
	if err := e.svc.Values().DeleteValue(t.Context(), "teams:thread:"+om.Conversation); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Values().SetValueFor(t.Context(), "teams:thread:"+om.ID, string(old.ID), time.Hour); err != nil {
		t.Fatal(err)
	}
	e.deliver(e.fake.ReplyActivity(alice, "19:random000000000000000000000000@thread.tacv2;messageid="+om.ID, "not this"))
	if got := e.get(old.ID); got.State != core.StateOpen {
		t.Fatalf("an old tie answered from another channel: %+v", got.Resolution)
	}
	e.deliver(e.fake.ReplyActivity(alice, om.Conversation, "zone b"))
	if got := e.get(old.ID); got.State != core.StateAnswered || got.Resolution.Answer != "zone b" {
		t.Fatalf("an old tie in its own channel: %s %+v", got.State, got.Resolution)
	}
}

// TestUntiedThreadReplyIsTold: a reply that @mentions the bot in a
// channel thread tied to no question is told nothing was recorded; the
// channel's talk that does not mention the bot gets no note. Before,
// both were dropped without a word.
func TestUntiedThreadReplyIsTold(t *testing.T) {
	e := newEnv(t)
	conv := channel + ";messageid=1699999999999"
	e.deliver(e.fake.ReplyActivity(bob, conv, "lunch?"))
	if e.toldNow(bob, "") {
		t.Fatal("talk not meant for the bot was answered")
	}
	e.deliver(e.fake.MentioningBot(e.fake.ReplyActivity(alice, conv, "eu-west-1")))
	if !e.toldNow(alice, "Nothing was recorded") {
		t.Fatalf("the replier was told nothing: %+v", e.fake.Messages())
	}
}

// anon is someone Teams sends without a Microsoft Entra object id, as
// it sends an anonymous meeting participant.
var anon = teamsfake.User{ID: "29:1anon", Name: "Guest (anonymous)"}

// TestAnonymousSenderIsTold: a click or a thread reply from someone
// Teams names no Entra account for records nothing, and they are told
// askbridge cannot tell who they are. Before, the click was told "This
// question no longer exists." and the reply was dropped without a word.
func TestAnonymousSenderIsTold(t *testing.T) {
	e := newEnv(t)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	m := e.card(q.ID, nil)
	if note := e.execute(anon, m, action(t, m, card.LabelApprove)); !strings.Contains(note, "cannot tell who you are") || !strings.Contains(note, "Nothing was recorded") {
		t.Fatalf("the clicker was told %q", note)
	}
	c := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	cm := e.card(c.ID, nil)
	e.deliver(e.fake.ReplyActivity(anon, cm.Conversation, "eu-west-1"))
	if !e.toldNow(anon, "cannot tell who you are") {
		t.Fatalf("the replier was told nothing: %+v", e.fake.Messages())
	}
	if e.get(q.ID).State != core.StateOpen || e.get(c.ID).State != core.StateOpen {
		t.Fatal("an anonymous sender's act was recorded")
	}
}

// TestThreadTieOutlivesReaskAndEscalation: a clarification asked for
// 48 hours whose deadline a reask or an escalation moves 48 hours on
// still takes replies in its card's thread 74 hours in. Before, the
// thread's tie lasted the first deadline and a day, and the reply was
// dropped without a word while the question was open.
func TestThreadTieOutlivesReaskAndEscalation(t *testing.T) {
	for name, policy := range map[string]core.TimeoutPolicy{"reask": core.OnTimeoutReask, "escalate": core.OnTimeoutEscalate} {
		t.Run(name, func(t *testing.T) {
			clock := core.NewSimClock(time.Now())
			e := newEnvWith(t, nil, clock)
			q, err := e.svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Route: "ops",
				Text: "Which region?", Reversibility: core.Reversible, Timeout: 48 * time.Hour, OnTimeout: policy})
			if err != nil {
				t.Fatal(err)
			}
			m := e.card(q.ID, nil)
			clock.Advance(48*time.Hour + time.Minute)
			if rep, err := e.svc.Tick(t.Context()); err != nil || rep.Reasked+rep.Escalated != 1 {
				t.Fatalf("tick: %+v %v", rep, err)
			}
			clock.Advance(26 * time.Hour)
			if got := e.get(q.ID); got.State != core.StateOpen {
				t.Fatalf("the question is %s", got.State)
			}
			e.deliver(e.fake.ReplyActivity(alice, m.Conversation, "eu-west-1"))
			if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
				t.Fatalf("the reply 74 hours in: %s %+v", got.State, got.Resolution)
			}
		})
	}
}
