package telegram

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"golang.org/x/time/rate"
)

// liveness is how long a tap may take to be answered here: generous, as
// an answer that is not held up comes in milliseconds.
const liveness = 10 * time.Second

// slowChat gives each chat a burst of ten sends (enough for the cards),
// then one send every per; drainChat spends what is left.
func slowChat(per time.Duration) Limits {
	return Limits{PerChat: rate.Every(per), PerChatBurst: 10, PerGroup: rate.Inf, Global: rate.Inf}
}

// drainChat spends whatever chat's bucket holds now, so its next send
// waits for the bucket to refill.
func (e *env) drainChat(chat int64) { drain(e.a.lim.forChat(chat).chat) }

// drain spends whatever l holds now.
func drain(l *rate.Limiter) {
	for l.Allow() {
	}
}

// clarificationAndDecision asks a clarification and a decision in room and
// waits until both cards, and the clarification's own ForceReply prompt,
// are sent, so nothing the test did not start is waiting on the budget.
func (e *env) clarificationAndDecision() (qc *core.Question, clar, dec telegramfake.Message) {
	e.t.Helper()
	qc = e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	qd := e.ask(decisionInput())
	clar = e.card(qc.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	dec = e.card(qd.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if e.prompt(func(m telegramfake.Message) bool { return m.ReplyTo == clar.ID }).ForceReply == nil {
		e.t.Fatal("the clarification's prompt was never sent")
	}
	return qc, clar, dec
}

// TestAWaitingPromptHoldsUpNoOtherTap: a "Reply to answer" tap whose
// prompt must wait for its chat's send budget does not hold up the
// updates after it. Before, the prompt was sent inline: with long polling
// every later update, in any chat, waited behind it (their taps'
// spinners kept spinning until Telegram gave up on them), and a webhook
// held its answer to Telegram (which delivers a chat's updates in order)
// as long.
func TestAWaitingPromptHoldsUpNoOtherTap(t *testing.T) {
	for _, mode := range []string{"polling", "webhook"} {
		t.Run(mode, func(t *testing.T) {
			var kv PollState
			if mode == "polling" {
				kv = newMemKV()
			}
			e := newEnv(t, kv)
			e.a.lim = newLimiter(slowChat(15 * time.Second))
			if kv != nil {
				e.startRun()
			} else {
				e.run()
			}
			_, clar, dec := e.clarificationAndDecision()
			e.drainChat(room)
			deadline := time.After(liveness)
			deliver := func(u map[string]any) <-chan int {
				done := make(chan int, 1)
				go func() {
					status, err := e.fake.Deliver(u)
					if err != nil {
						t.Error(err)
					}
					done <- status
				}()
				return done
			}
			u1, q1, err := e.fake.CallbackUpdate(userAlice, room, clar.ID, findButton(t, clar, "Reply to answer").Data)
			if err != nil {
				t.Fatal(err)
			}
			d1 := deliver(u1)
			if note, err := e.fake.CallbackAnswer(q1, liveness); err != nil || !strings.Contains(note, "prompt that follows") {
				t.Fatalf("the first tapper was told %q, %v", note, err)
			}
			u2, q2, err := e.fake.CallbackUpdate(userBob, room, dec.ID, findButton(t, dec, "PostgreSQL").Data)
			if err != nil {
				t.Fatal(err)
			}
			d2 := deliver(u2)
			if note, err := e.fake.CallbackAnswer(q2, liveness); err != nil || note != "Recorded: PostgreSQL" {
				t.Fatalf("the second tap, behind a prompt waiting on its budget: told %q, %v", note, err)
			}
			for _, m := range e.fake.Messages(room) {
				if m.ForceReply != nil && m.ForceReply.Selective {
					t.Fatalf("the prompt went out before its budget allowed: %+v", m)
				}
			}
			for i, d := range []<-chan int{d1, d2} {
				select {
				case status := <-d:
					if status != 0 && status != http.StatusOK {
						t.Fatalf("update %d: the webhook answered %d", i+1, status)
					}
				case <-deadline:
					t.Fatalf("update %d: the webhook held its answer while the prompt waited", i+1)
				}
			}
		})
	}
}

// TestAPromptThatCannotGoIsNotPromised: a tap whose prompt could not be
// sent within its wait (the chat's budget is spent for far longer) is told
// so, and how else to answer, instead of being promised a prompt that is
// then only logged. A clarification's card takes a reply itself.
func TestAPromptThatCannotGoIsNotPromised(t *testing.T) {
	e := newEnv(t, nil)
	e.a.lim = newLimiter(slowChat(time.Hour))
	e.run()
	qc, clar, _ := e.clarificationAndDecision()
	e.drainChat(room)
	note := e.click(userAlice, clar, findButton(t, clar, "Reply to answer"))
	if strings.Contains(note, "prompt that follows") || !strings.Contains(note, "reply to the question") {
		t.Fatalf("told %q with no prompt to follow", note)
	}
	if _, err := e.fake.Reply(userAlice, room, clar.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	q := e.wait(qc.ID, func(q *core.Question) bool { return !q.Open() })
	if q.Resolution.Answer != "eu-west-1" {
		t.Fatalf("resolution %+v", q.Resolution)
	}
}

// TestAnEditSpendsNoGroupBudget: an edit of a card waits on its chat's
// budget only, as core's budgets have it (Budgets) and as the README says
// (Telegram's twenty a minute per group count new messages). Before, the
// adapter's own limiter charged an edit to the group's bucket too, so a
// busy group's card kept its buttons long after a click closed it.
func TestAnEditSpendsNoGroupBudget(t *testing.T) {
	e := newEnv(t, nil)
	e.a.lim = newLimiter(Limits{PerChat: rate.Inf, PerGroup: rate.Every(time.Hour), GroupBurst: 10, Global: rate.Inf})
	e.run()
	q := e.ask(decisionInput())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	drain(e.a.lim.forChat(room).group)
	if note := e.click(userAlice, c, findButton(t, c, "SQLite")); note != "Recorded: SQLite" {
		t.Fatalf("told %q", note)
	}
	e.card(q.ID, func(m telegramfake.Message) bool { return m.Edits > 0 && len(m.Buttons()) == 0 })
}

// TestPromptsWaitingAreBounded: at most maxPrompts prompts wait at once,
// and none is taken once Run has ended; close waits for those held.
func TestPromptsWaitingAreBounded(t *testing.T) {
	p := newPromptQueue()
	chat := func(i int) int64 { return int64(-100 - i%(maxPrompts/maxChatPrompts+1)) } // no chat past its share
	for i := range maxPrompts {
		if !p.hold(chat(i)) {
			t.Fatalf("place %d refused", i+1)
		}
	}
	if p.hold(-1) {
		t.Fatal("a place past maxPrompts was given")
	}
	p.release(chat(0))
	if !p.hold(chat(0)) {
		t.Fatal("a released place was not given again")
	}
	closed := make(chan struct{})
	go func() { p.close(); close(closed) }()
	<-p.ctx.Done() // close gives up the waits for a budget at once
	for i := range maxPrompts {
		select {
		case <-closed:
			t.Fatal("close returned while prompts were held")
		default:
		}
		p.release(chat(i))
	}
	<-closed
	if p.hold(chat(0)) {
		t.Fatal("a place was given after close")
	}
}

// TestAChatHoldsItsShareOfPlaces: one chat holds at most maxChatPrompts
// places, and a place it gives back is its own again; the others' are
// still free.
func TestAChatHoldsItsShareOfPlaces(t *testing.T) {
	p := newPromptQueue()
	for i := range maxChatPrompts {
		if !p.hold(room) {
			t.Fatalf("place %d of the chat refused", i+1)
		}
	}
	if p.hold(room) {
		t.Fatal("a chat was given a place past its share")
	}
	if !p.hold(room2) {
		t.Fatal("another chat was refused a place")
	}
	p.release(room)
	if !p.hold(room) {
		t.Fatal("a place the chat gave back was not its own again")
	}
}

// TestARefusalNoteHoldsUpNoOtherTap: the note telling a late replier why
// their reply was not recorded waits for its chat's budget off the
// update's goroutine too, so a tap after it is answered at once. Before,
// it was sent inline, and every later update waited behind it.
func TestARefusalNoteHoldsUpNoOtherTap(t *testing.T) {
	e := newEnv(t, newMemKV())
	e.a.lim = newLimiter(slowChat(15 * time.Second))
	e.startRun()
	qc, clar, dec := e.clarificationAndDecision()
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: qc.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	e.drainChat(room)
	if _, err := e.fake.Reply(userBob, room, clar.ID, "too late"); err != nil {
		t.Fatal(err)
	}
	u2, q2, err := e.fake.CallbackUpdate(userAlice, room, dec.ID, findButton(t, dec, "PostgreSQL").Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Deliver(u2); err != nil {
		t.Fatal(err)
	}
	if note, err := e.fake.CallbackAnswer(q2, liveness); err != nil || note != "Recorded: PostgreSQL" {
		t.Fatalf("a tap behind a refusal note waiting on its budget: told %q, %v", note, err)
	}
}

// TestAPhotoReplyIsToldSo: a photo sent as the reply to a clarification,
// with a caption, is not recorded, since only the caption's words would
// reach the agent and not the photo they point at, and its sender is told
// to reply with text alone; before, it was dropped with no word. A text
// reply then counts.
func TestAPhotoReplyIsToldSo(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	qc, clar, _ := e.clarificationAndDecision()
	before := len(e.fake.Messages(room))
	u, err := e.fake.PhotoReplyUpdate(userAlice, room, clar.ID, "see the screenshot")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Deliver(u); err != nil {
		t.Fatal(err)
	}
	if got := e.lastText(before); !strings.HasPrefix(got, "Only text can be recorded") {
		t.Fatalf("a photo reply was told %q", got)
	}
	if q, err := e.svc.Get(t.Context(), qc.ID); err != nil || !q.Open() {
		t.Fatalf("the photo reply changed the question: %+v, %v", q, err)
	}
	if _, err := e.fake.Reply(userAlice, room, clar.ID, "eu-west-1"); err != nil {
		t.Fatal(err)
	}
	q := e.wait(qc.ID, func(q *core.Question) bool { return !q.Open() })
	if q.Resolution.Answer != "eu-west-1" {
		t.Fatalf("resolution %+v", q.Resolution)
	}
}
