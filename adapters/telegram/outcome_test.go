package telegram

import (
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// TestServerErrorsAreOfUnknownOutcome: Telegram answers
// {"ok":false,"error_code":502,"description":"Bad Gateway"} (and 500)
// when something behind it failed, which may be after the message was
// sent: the post's retry must be flagged as a possible repeat (law 4),
// not taken for a first post. A refusal of the request itself posted
// nothing.
func TestServerErrorsAreOfUnknownOutcome(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(decisionInput())
	if err := e.a.hello(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := strconv.FormatInt(room, 10)
	for _, c := range []struct {
		f    telegramfake.Failure
		want string
	}{
		{telegramfake.Failure{Code: 502, Description: "Bad Gateway"}, "unknown"},
		{telegramfake.Failure{Code: 500, Description: "Internal Server Error"}, "unknown"},
		{telegramfake.Failure{Code: 504, Description: "Gateway Timeout"}, "unknown"},
		{telegramfake.Failure{Code: 401, Description: "Unauthorized"}, "not sent"},
		{telegramfake.Failure{Code: 409, Description: "Conflict"}, "not sent"},
	} {
		e.fake.FailNext("sendMessage", c.f)
		_, err := e.a.Post(t.Context(), q, core.MessageRef{Room: r, Kind: core.DeliverPost})
		if got := adaptertest.Outcome(err); got != c.want {
			t.Errorf("post answered %d: %s (%v); want %s", c.f.Code, got, err, c.want)
		}
		e.fake.FailNext("sendMessage", c.f)
		if got := adaptertest.Outcome(e.a.Remind(t.Context(), q, r)); got != c.want {
			t.Errorf("reminder answered %d: %s; want %s", c.f.Code, got, c.want)
		}
	}
}

// TestReplyPromptSpendsTheSharedBudgets: a clarification's card is
// followed by its ForceReply prompt, a second message into the chat. The
// drain spends one message of the shared budgets for the delivery; the
// prompt spends its own, or a group's twenty a minute (shared by every
// replica) is overdrawn by each clarification, and the prompt that
// Telegram then refuses with 429 is lost.
func TestReplyPromptSpendsTheSharedBudgets(t *testing.T) {
	e := newEnv(t, nil)
	b := &adaptertest.CountingBudget{}
	e.budget = b
	e.a.opts.Budget = b
	e.run()
	q := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	c := e.card(q.ID, func(telegramfake.Message) bool { return true })
	if e.prompt(func(m telegramfake.Message) bool { return m.ReplyTo == c.ID }).ForceReply == nil {
		t.Fatal("the prompt was never sent")
	}
	sent := countCalls(e.fake, "sendMessage")
	if sent != 2 {
		t.Fatalf("%d messages sent; want the card and its prompt", sent)
	}
	r := strconv.FormatInt(room, 10)
	e.fake.Wait(5*time.Second, func() bool { return b.Count("telegram:group:"+r) >= sent })
	for _, key := range []string{"telegram:all", "telegram:group:" + r, "telegram:chat:" + r} {
		if got := b.Count(key); got != sent {
			t.Errorf("%s spent %d times for %d messages", key, got, sent)
		}
	}
}
