package telegram

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/inhand"
	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A "Reply to answer" (or "Something else", or "Edit and approve") tap is
// answered at once, and its ForceReply prompt follows once the chat's send
// budget allows. The prompt waits on a goroutine of its own, so that it
// holds up no update after it (long polling takes them one at a time, and
// a webhook's answer to Telegram would wait too). The note that tells a
// replier why their reply was not recorded goes the same way.
const (
	// promptWait is the longest a prompt may expect to wait for its
	// budget (limiter.delay) and still be promised: past it the tapper
	// is told that no prompt follows and how else to answer, rather than
	// promised one that would only be logged as not sent.
	promptWait = 20 * time.Second
	// promptBudget bounds the wait of a promised prompt, which sends
	// that queued meanwhile may have made a little longer than expected.
	promptBudget = handleTimeout
	// promptSend bounds the sendMessage itself once the budget allows.
	promptSend = 10 * time.Second
	// maxPrompts bounds the prompts waiting at once, and so the
	// goroutines and what a shutdown waits for. Each waits at most
	// promptBudget, and a chat's budget lets few wait that long, so the
	// bound is reached only by many chats at once; a tap past it is told
	// to tap again, as one that would wait too long is.
	maxPrompts = 64
	// maxChatPrompts is a chat's share of maxPrompts: as many messages
	// as a group may send within promptBudget (twenty a minute), so no
	// more could go in time anyway. Without it one member's flood of late
	// replies, each owed a note, held every place, and taps in every
	// other chat were told to tap again in a minute.
	maxChatPrompts = 10
)

// promptQueue tracks the prompts promised and the notes to repliers not
// yet sent, and the taps still at work (spawn), so that Run returns only
// once each is sent, given up or done.
type promptQueue struct {
	// ctx ends when Run does: a prompt still waiting for its budget is
	// then given up (and logged) rather than hold up the shutdown; the
	// tap that asked for it works again on any replica.
	ctx    context.Context
	cancel context.CancelFunc
	// work counts the places held and the taps at work, for close to
	// wait for; it takes none once Run has ended.
	work  inhand.Group
	mu    sync.Mutex
	held  int
	chats map[int64]int // places held per chat, while any are
}

func newPromptQueue() *promptQueue {
	ctx, cancel := context.WithCancel(context.Background())
	return &promptQueue{ctx: ctx, cancel: cancel, chats: map[int64]int{}}
}

// hold takes a place for one message into chat, unless maxPrompts are
// held, or chat holds its share (maxChatPrompts), or Run has ended; the
// holder must call release with the same chat.
func (p *promptQueue) hold(chat int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held >= maxPrompts || p.chats[chat] >= maxChatPrompts || !p.work.Add() {
		return false
	}
	p.held++
	p.chats[chat]++
	return true
}

// spawn runs f on a goroutine of its own that close waits for, unless
// Run has ended; it reports whether f was started.
func (p *promptQueue) spawn(f func()) bool { return p.work.Go(f) }

// release gives back a place hold took for chat.
func (p *promptQueue) release(chat int64) {
	p.mu.Lock()
	p.held--
	if p.chats[chat]--; p.chats[chat] <= 0 {
		delete(p.chats, chat)
	}
	p.mu.Unlock()
	p.work.Done()
}

// close gives up the waits for a budget and waits until every held
// prompt is released. No place is taken after it.
func (p *promptQueue) close() {
	p.work.Stop()
	p.cancel()
	p.work.Wait()
}

// sendPrompt sends a held prompt into chat once its budget allows, and
// releases its place. It runs on a goroutine of its own, past the end of
// the update that asked for it. A prompt that could not be sent after the
// tapper was promised it is logged as a warning.
func (a *Adapter) sendPrompt(to place, prompt tgbotapi.MessageConfig, q core.QuestionID) {
	a.sendHeld(to, prompt, func(err error) {
		a.log.Warn().Err(err).Str("question", string(q)).Int64("chat", to.chat).
			Msg("telegram: the reply prompt promised to a tapper was not sent")
	})
}

// sendHeld sends msg, whose place in the queue is held for to's chat,
// to `to` once its budgets allow (the shared ones, spendShared, then this process's),
// releases the place, and tells failed why it could not go. A 429 is
// Telegram's own limit speaking (its limits are not all published, and
// the shared budgets let a message go when the store cannot say): the
// message waits the retry_after it names and goes again, while that
// keeps within promptBudget, for the tapper was promised it.
func (a *Adapter) sendHeld(to place, msg tgbotapi.MessageConfig, failed func(error)) {
	defer a.prompts.release(to.chat)
	wctx, cancel := context.WithTimeout(a.prompts.ctx, promptBudget)
	defer cancel()
	for {
		err := a.spendShared(wctx, to.chat)
		if err == nil {
			err = a.lim.wait(wctx, to.chat)
		}
		if err == nil {
			// Granted: the send is seen through even if Run ends meanwhile.
			sctx, cancel := context.WithTimeout(context.Background(), promptSend)
			_, err = a.post(sctx, to, msg)
			cancel()
		}
		if err == nil {
			return
		}
		var slow *core.RetryAfter
		if dl, _ := wctx.Deadline(); !errors.As(err, &slow) || time.Now().Add(slow.After).After(dl) || !a.sleep(wctx, slow.After) {
			failed(err)
			return
		}
	}
}
