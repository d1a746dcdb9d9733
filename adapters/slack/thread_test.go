package slack_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// TestThreadReplyNotReadIsToldSo: a reply in a card's thread that reaches
// a replica which did not post the card, while Slack fails the read of
// the thread's root (conversations.replies) or answers it too late for
// the event's ack, is not recorded, and its writer is told to try again;
// before, it was dropped with no word, and Slack, acked, never sent it
// again. Sent again, it counts. A read that ran out of time is told so
// too, not that the reply may have been recorded (card.TimedOutNote):
// nothing was written.
func TestThreadReplyNotReadIsToldSo(t *testing.T) {
	for name, fail := range map[string]func(f *slackfake.Fake) (release func()){
		"refused": func(f *slackfake.Fake) func() {
			f.FailNext("conversations.replies", slackfake.Failure{Error: "internal_error"})
			return func() {}
		},
		"too slow": func(f *slackfake.Fake) func() { return f.Hold("conversations.replies") },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, false)
			q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
			card := e.card(q.ID)
			other, err := slack.New(e.svc, slack.Options{BotToken: "xoxb-test", SigningSecret: secret,
				APIURL: strings.TrimSuffix(e.fake.APIURL(), "/"), AckBudget: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			other.Mount(mux)
			replica := httptest.NewServer(mux)
			defer replica.Close()
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { _ = other.Run(ctx) }) // its notes go out from Run
			defer wg.Wait()
			defer cancel()
			reply := func() {
				body, _ := e.fake.ReplyEvent(e.fake.AddReply(card.Channel, card.TS, alice.ID, "eu-west-1"))
				if status, resp, err := slackfake.Event(replica.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
					t.Fatalf("event answered %d %q: %v", status, resp, err)
				}
			}
			release := fail(e.fake)
			reply()
			release()
			if note := e.note(alice, 0); !strings.Contains(note, "please try again") {
				t.Fatalf("a reply whose thread could not be read was told %q", note)
			}
			if got := e.get(q.ID); !got.Open() {
				t.Fatalf("the unread reply changed the question: %s", got.State)
			}
			reply()
			e.until("the reply sent again recorded", func() bool { return !e.get(q.ID).Open() })
			if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
				t.Fatalf("the reply sent again: %s %+v", got.State, got.Resolution)
			}
		})
	}
}

// TestThreadReplyWithFileIsToldSo: a reply in a card's thread that shares
// a file (Slack's message.file_share event) is not recorded, since only
// its words would reach the agent and not what they point at, and its
// writer is told to reply with text alone; before, it was dropped with no
// word. A text reply then counts.
func TestThreadReplyWithFileIsToldSo(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Why did the deploy fail?"})
	card := e.card(q.ID)
	m := e.fake.AddReply(card.Channel, card.TS, alice.ID, "see the attached log")
	m.File = "deploy.log"
	body, _ := e.fake.ReplyEvent(m)
	if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
		t.Fatalf("event answered %d %q: %v", status, resp, err)
	}
	if note := e.note(alice, 0); !strings.Contains(note, "Only text") || !strings.Contains(note, "nothing was recorded") {
		t.Fatalf("a reply sharing a file was told %q", note)
	}
	if got := e.get(q.ID); !got.Open() {
		t.Fatalf("the reply sharing a file changed the question: %s %+v", got.State, got.Resolution)
	}
	e.reply(alice, card, "the disk was full", 0)
	e.until("the text reply recorded", func() bool { return !e.get(q.ID).Open() })
	if got := e.get(q.ID); got.Resolution.Answer != "the disk was full" {
		t.Fatalf("the text reply: %+v", got.Resolution)
	}
}

// TestFormReplyAnswersTheItemItWasWrittenFor: a thread reply answers the
// item that was the form's next when it was written (its ts), and is
// refused, with a note, if someone answered that item before the reply
// was handled. Before, it was recorded as the answer to the next item,
// which it was never written for, and closed the form.
func TestFormReplyAnswersTheItemItWasWrittenFor(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(form())
	card := e.card(q.ID)
	send := func(m slackfake.Message) {
		t.Helper()
		body, _ := e.fake.ReplyEvent(m)
		if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
			t.Fatalf("event answered %d %q: %v", status, resp, err)
		}
	}
	before := e.fake.AddReply(card.Channel, card.TS, alice.ID, "Tuesday, after the freeze")
	e.click(bob, card, button(t, card, core.RefOption, 0, 0)) // Monday, after the reply was written
	send(before)
	if note := e.note(alice, 0); !strings.Contains(note, "already answered") {
		t.Fatalf("the replier was told %q", note)
	}
	if got := e.get(q.ID); !got.Open() || len(got.Answers) != 1 || got.Answers[0].OptionID != "mon" {
		t.Fatalf("the day reply changed another item: %s %+v", got.State, got.Answers)
	}
	// Written after the click: a second on, past the millisecond askbridge
	// stamped the click with (within which the order is not known).
	after := e.fake.AddReply(card.Channel, card.TS, alice.ID, "Short, please")
	at := time.Now().Add(time.Second)
	after.TS = fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000)
	send(after)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Answers[1].ItemID != "notes" || got.Answers[1].Text != "Short, please" {
		t.Fatalf("a reply written after the click: %s %+v", got.State, got.Answers)
	}
}

// TestReplyToStandaloneReminderAnswers: a reply in the thread of a
// reminder posted where the card is not (it names its question) answers
// as a reply in the card's thread does. Before, it was dropped without a
// word: the thread's root is not a card.
func TestReplyToStandaloneReminderAnswers(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	e.card(q.ID)
	if err := e.a.Remind(t.Context(), e.get(q.ID), "C0ELSE"); err != nil {
		t.Fatal(err)
	}
	var rem slackfake.Message
	for _, m := range e.fake.Messages() {
		if m.Channel == "C0ELSE" && m.ThreadTS == "" {
			rem = m
		}
	}
	if rem.TS == "" {
		t.Fatalf("no reminder in C0ELSE: %+v", e.fake.Messages())
	}
	e.reply(alice, rem, "eu-west-1", 0)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" {
		t.Fatalf("the reply to the reminder: %s %+v", got.State, got.Resolution)
	}
}

// ahead is the wall clock run fast by a fixed amount: a server whose
// clock is ahead of Slack's.
type ahead time.Duration

func (a ahead) Now() time.Time { return time.Now().Add(time.Duration(a)) }

// TestFormReplyAfterOwnClickCountsWhateverTheClocks: someone who
// answers a form's first item with a click and then replies in the
// thread answers the next item, even when askbridge's clock runs ahead
// of Slack's (the reply's ts, Slack's, then reads as earlier than the
// click, askbridge's). Before, such a reply was refused as written for
// the item its own writer had just answered.
func TestFormReplyAfterOwnClickCountsWhateverTheClocks(t *testing.T) {
	e := newEnvPeople(t, false, nil, nil, ahead(time.Minute))
	q := e.ask(form())
	card := e.card(q.ID)
	e.click(alice, card, button(t, card, core.RefOption, 0, 0))
	if got := e.get(q.ID); len(got.Answers) != 1 {
		t.Fatalf("alice's click: %+v", got.Answers)
	}
	e.reply(alice, card, "Short, please", 0)
	if got := e.get(q.ID); got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].Text != "Short, please" {
		t.Fatalf("alice's reply after her click: %s %+v", got.State, got.Answers)
	}
}

// TestDMThreadReplyAnswers: a person asked in a DM (dm: true) answers a
// clarification by replying in the DM card's thread, as the card asks;
// Slack sends that as a message.im event (channel_type "im", a D…
// channel), which counts as a thread reply in a channel does, and the
// note goes back into that thread.
func TestDMThreadReplyAnswers(t *testing.T) {
	e := newEnvPeople(t, false, nil, map[string]core.Person{
		"alice": {Name: "alice", IDs: map[core.Surface][]string{core.SurfaceSlack: {alice.ID}}, DM: true},
	}, nil)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	dm := e.dmCard(q.ID)
	body, _ := e.fake.ReplyEvent(e.fake.AddReply(dm.Room, dm.ID, alice.ID, "eu-west-1"))
	if !strings.Contains(string(body), `"channel_type":"im"`) {
		t.Fatalf("not a message.im event: %s", body)
	}
	if status, resp, err := slackfake.Event(e.srv.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != http.StatusOK {
		t.Fatalf("event answered %d %q: %v", status, resp, err)
	}
	e.until("the DM reply recorded", func() bool { return !e.get(q.ID).Open() })
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" || got.Resolution.Decider.ID != alice.ID {
		t.Fatalf("the DM reply: %s %+v", got.State, got.Resolution)
	}
	e.note(alice, 0)
	if n := e.fake.Ephemerals()[0]; n.Channel != dm.Room || n.ThreadTS != dm.ID {
		t.Fatalf("the replier's note went to %s thread %q; want the DM card's thread %s %s", n.Channel, n.ThreadTS, dm.Room, dm.ID)
	}
}
