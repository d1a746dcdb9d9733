package slack_test

import (
	"context"
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

// TestReminderReplyCountsOnceAuthTestAnswers: a replica started while
// Slack does not answer auth.test asks it again, and then knows its own
// posts: a reply under one of its reminders (posted where the question's
// card is not) counts. Until then, whether the reminder is its own is
// unknown, and the reply's writer is asked to send it again, nothing
// cached. Before, auth.test was asked once at start: for the life of the
// process a reply to a reminder was dropped without a word (and its
// thread taken for no card's for an hour), the reminder never told from
// a look-alike.
func TestReminderReplyCountsOnceAuthTestAnswers(t *testing.T) {
	e := newEnv(t, false)
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	e.card(q.ID)
	if err := e.a.Remind(t.Context(), e.get(q.ID), "C0ELSE"); err != nil {
		t.Fatal(err)
	}
	var reminder slackfake.Message
	e.until("the reminder", func() bool {
		for _, m := range e.fake.Messages() {
			if m.Channel == "C0ELSE" && m.ThreadTS == "" {
				reminder = m
				return true
			}
		}
		return false
	})

	asked := e.fake.Calls("auth.test")
	e.fake.FailNext("auth.test", slackfake.Failure{Error: "internal_error"})
	other, err := slack.New(e.svc, slack.Options{BotToken: "xoxb-test", SigningSecret: secret, APIURL: strings.TrimSuffix(e.fake.APIURL(), "/")})
	if err != nil {
		t.Fatal(err)
	}
	again := make(chan struct{}) // the pause before auth.test is asked again ends when closed
	other.SetSleep(func(ctx context.Context, _ time.Duration) bool {
		select {
		case <-again:
			return true
		case <-ctx.Done():
			return false
		}
	})
	mux := http.NewServeMux()
	other.Mount(mux)
	replica := httptest.NewServer(mux)
	defer replica.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = other.Run(ctx) })
	defer wg.Wait()
	defer cancel()
	e.until("the refused auth.test", func() bool { return e.fake.Calls("auth.test") > asked })
	reply := func(text string) {
		t.Helper()
		body, _ := e.fake.ReplyEvent(e.fake.AddReply(reminder.Channel, reminder.TS, alice.ID, text))
		if status, resp, err := slackfake.Event(replica.URL+slack.EventsPath, secret, body).Send(t.Context()); err != nil || status != 200 {
			t.Fatalf("event answered %d %q: %v", status, resp, err)
		}
	}

	reply("eu-west-1")
	if note := e.note(alice, 0); !strings.Contains(note, "try again") {
		t.Fatalf("a reply to a reminder not yet known for ours was told %q", note)
	}
	if got := e.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("after the reply not yet read: %s %+v", got.State, got.Resolution)
	}

	close(again)
	e.until("auth.test asked again", other.KnowsItself)
	reply("eu-west-2")
	e.note(alice, 1)
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-2" || got.Resolution.Decider.ID != alice.ID {
		t.Fatalf("the reply once auth.test answered: %s %+v", got.State, got.Resolution)
	}
}
