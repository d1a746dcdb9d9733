package telegram

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// busyBudget is a shared send budget (core.Budget) that always has a
// send, but for the keys marked busy, whose next send is an hour away, as
// a group's is once its twenty a minute are spent on every replica.
type busyBudget struct {
	mu   sync.Mutex
	busy map[string]bool
}

func (b *busyBudget) mark(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.busy[key] = true
}

func (b *busyBudget) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	return b.Until(ctx, key, l)
}

func (b *busyBudget) Until(_ context.Context, key string, _ core.Limit) (time.Duration, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy[key] {
		return time.Hour, nil
	}
	return 0, nil
}

// TestAFloodInOneChatLeavesOtherChatsServed: one member of a group
// replying to a closed question again and again is owed a note each
// time, and each note waits for the group's send budget; those notes
// hold at most the chat's share of the places prompts and notes wait in,
// so a "Reply to answer" tap in another chat is still promised its
// prompt, and gets it. Before, the flood held every place (64), and the
// tapper in the other chat was told no prompt could be sent.
func TestAFloodInOneChatLeavesOtherChatsServed(t *testing.T) {
	e := newEnvIn(t, nil, coretest.OpenStore(t), strconv.FormatInt(room, 10), strconv.FormatInt(room2, 10))
	b := &busyBudget{busy: map[string]bool{}}
	e.a.opts.Budget = b
	e.run()
	closed := e.ask(clarificationInput())
	open := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which zone?"})
	flooded := e.card(closed.ID, func(telegramfake.Message) bool { return true })
	other := e.cardIn(room2, open.ID, func(telegramfake.Message) bool { return true })
	if !e.fake.Wait(10*time.Second, func() bool { return len(e.sends(room)) == 4 && len(e.sends(room2)) == 4 }) {
		t.Fatal("the cards and their prompts were not all sent")
	}
	e.notesSent()
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: closed.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	b.mark("telegram:group:" + strconv.FormatInt(room, 10))

	for i := range maxPrompts {
		if _, err := e.fake.Reply(userBob, room, flooded.ID, "late "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	e.a.prompts.mu.Lock()
	held := e.a.prompts.chats[room]
	e.a.prompts.mu.Unlock()
	if held < maxChatPrompts {
		t.Fatalf("the flood's notes hold %d places; the test wants them waiting", held)
	}
	if note := e.click(userAlice, other, findButton(t, other, "Reply to answer")); !strings.Contains(note, "prompt that follows") {
		t.Fatalf("a tap in the other chat, during the flood, was told %q", note)
	}
	if !e.fake.Wait(10*time.Second, func() bool {
		for _, m := range e.fake.Messages(room2) {
			if m.ForceReply != nil && m.ForceReply.Selective {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the prompt promised in the other chat never came")
	}
}
