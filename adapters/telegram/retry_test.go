package telegram

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

// TestA429dPromptIsSentAfterItsWait: a reply prompt promised to a
// tapper, and a note telling a replier why their reply was not
// recorded, that Telegram refuses with 429 (its limits are its own, and
// the shared budgets let a message go ahead when the store cannot say)
// are sent again once Telegram's retry_after has passed, within the
// prompt's budget. Before, each was only logged: the tapper, told
// "Reply to the prompt that follows", got none, and the replier no word.
func TestA429dPromptIsSentAfterItsWait(t *testing.T) {
	tooMany := telegramfake.Failure{Code: 429, Description: "Too Many Requests: retry after 3", RetryAfter: 3}
	t.Run("prompt", func(t *testing.T) {
		e, waited := newWaitingEnv(t)
		_, clar, _ := e.clarificationAndDecision()
		e.fake.FailNext("sendMessage", tooMany)
		if note := e.click(userAlice, clar, findButton(t, clar, "Reply to answer")); !strings.Contains(note, "prompt that follows") {
			t.Fatalf("the tapper was told %q", note)
		}
		if e.prompt(func(m telegramfake.Message) bool { return m.ReplyTo == clar.ID && m.ForceReply.Selective }).ForceReply == nil {
			t.Fatal("the prompt promised to the tapper was never sent")
		}
		if !waited(3 * time.Second) {
			t.Error("the prompt went again without waiting Telegram's 3 s")
		}
	})
	t.Run("note", func(t *testing.T) {
		e, waited := newWaitingEnv(t)
		qc, clar, _ := e.clarificationAndDecision()
		if _, err := e.svc.Decline(t.Context(), qc.ID, core.Decider{Surface: core.SurfaceAPI, ID: "ops"}); err != nil {
			t.Fatal(err)
		}
		e.fake.FailNext("sendMessage", tooMany)
		before := len(e.fake.Messages(room))
		if _, err := e.fake.Reply(userAlice, room, clar.ID, "eu-west-1"); err != nil {
			t.Fatal(err)
		}
		if !e.fake.Wait(5*time.Second, func() bool { return len(e.fake.Messages(room)) > before }) {
			t.Fatal("the replier was told nothing")
		}
		if got := e.lastText(before); !strings.Contains(got, "not recorded") {
			t.Fatalf("the replier was told %q", got)
		}
		if !waited(3 * time.Second) {
			t.Error("the note went again without waiting Telegram's 3 s")
		}
	})
}

// newWaitingEnv is a running env whose adapter's waits return at once,
// and a report of whether one of d was asked for.
func newWaitingEnv(t *testing.T) (*env, func(d time.Duration) bool) {
	e := newEnv(t, nil)
	var mu sync.Mutex
	var waits []time.Duration
	e.a.sleep = func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err() == nil
	}
	e.run()
	return e, func(d time.Duration) bool { mu.Lock(); defer mu.Unlock(); return slices.Contains(waits, d) }
}
