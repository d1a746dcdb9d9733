package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// handleTimeout bounds the work one update may take.
const handleTimeout = 30 * time.Second

// answerBudget bounds how long a tap's store work (the update's dedupe,
// the question's read, the answer) may keep its callback query
// unanswered. Until it is answered the tapper sees a spinner, and
// Telegram refuses an answer that comes too late ("query is too old");
// Discord's adapter answers within a budget of the same size (its
// answerBudget). Past it the tapper is told the answer may or may not be
// recorded (card.TimedOutNote), which is the truth: the work goes on,
// bounded by handleTimeout, and a second tap is told how it ended.
const answerBudget = 2500 * time.Millisecond

// errStopping is why a tap that reached a replica whose Run is ending was
// not taken: nothing was done, and a tap again reaches one that takes it.
var errStopping = core.Internal("telegram tap", errors.New("this replica is stopping and takes no more taps"))

// handle acts on one update, unless it was handled before (sight): a
// tap on a card's button, a reply, an edit of a reply (onEdit), or a
// person's message in their private chat with the bot (privateNote).
// Everything else (other messages and edits, joins) is not ours. Only a
// message that may act (toBot, or one in a private chat) is marked: a
// group's administrator bot, or one whose privacy mode is off, is sent
// every message of the group, and each would cost a store write and a
// key kept for a day.
//
// It reports whether the update is done with. False leaves it to come
// again (the poller stores no offset past it, the webhook answers
// Telegram with an error so that Telegram sends it again): another
// handling has it in hand (a replica that may have died with it), or its
// handling failed on the store (settle).
func (a *Adapter) handle(ctx context.Context, u incoming) bool {
	ctx, cancel := context.WithTimeout(ctx, handleTimeout)
	defer cancel()
	var m *tgbotapi.Message
	act := a.onReply
	switch {
	case u.CallbackQuery != nil:
		return a.onCallback(ctx, u)
	case u.Message != nil && (a.toBot(u.Message) || inPrivate(u.Message)):
		m = u.Message
	case u.EditedMessage != nil && a.toBot(u.EditedMessage):
		m, act = u.EditedMessage, a.onEdit
	default:
		return true // not ours
	}
	g := a.sight(ctx, u.Update, seenHold)
	if !g.First() {
		return g.State == core.OnceDone
	}
	return a.settle(ctx, g, act(ctx, said{m, u.thread}))
}

// said is a person's message and the forum topic it is in (0: none),
// where what they are told goes.
type said struct {
	*tgbotapi.Message
	thread int
}

// where is where a note to m's writer goes: beside m, in its topic.
func (m said) where() place { return place{chat: m.Chat.ID, thread: m.thread} }

// toBot reports whether m replies to one of the bot's own messages: every
// message that may act (onReply, onEdit) does, as only the bot's messages
// carry a ref, or are its reminders.
func (a *Adapter) toBot(m *tgbotapi.Message) bool {
	to := m.ReplyToMessage
	return to != nil && to.From != nil && a.bot.Self.ID != 0 && to.From.ID == a.bot.Self.ID
}

// decider is who tapped or replied, as core knows people: the Telegram user
// id. Telegram has no roles a bot can read cheaply, so Roles stays empty.
func decider(u *tgbotapi.User) core.Decider {
	return core.Decider{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(u.ID, 10), Name: displayName(u)}
}

// tapped is what a tap's work came to: what to tell the tapper and what
// to do once they are told (tap's results); seen is what its sight
// found (an update handled before is answered no second time), and again
// is set when the work failed on the store and the update is to be
// handled again when it comes again (settle).
type tapped struct {
	seen  core.OnceState
	again bool
	note  string
	then  func()
}

// onCallback answers the callback query (u's) once, with a short,
// truthful status of what the tap did, and then starts what may wait on
// the rate limits (sending a reply prompt) on a goroutine of its own, so
// the updates after this one are not held up (see promptQueue). The
// tap's store work runs on a goroutine of its own (one Run waits for),
// its claim on the update kept while it runs (keep), and gets
// answerBudget: past it the tapper is told the answer may or may not be
// recorded (card.TimedOutNote), and the update is done with,
// while the work goes on without anyone waiting for it; a prompt it then
// promises still follows. A tap that another handling has in hand, or
// whose work failed on the store while polling (again), is answered
// nothing yet and is not done with (handle): it is answered when it
// comes again and is handled (a failing store's last try comes while the
// tapper can still be answered: tapTries), or, held by a handling that
// died with it, by the poller meanwhile (answerHeld).
func (a *Adapter) onCallback(ctx context.Context, u incoming) bool {
	cq := u.CallbackQuery
	done := make(chan tapped)
	late := make(chan struct{})
	work := func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handleTimeout)
		defer cancel()
		g := a.sight(wctx, u.Update, a.tapClaim())
		t := tapped{seen: g.State}
		if g.First() {
			kept := a.keep(wctx, g)
			var err error
			t.note, t.then, err = a.tap(wctx, cq, u.thread)
			kept()
			t.again = !a.settle(wctx, g, err)
		}
		select {
		case done <- t:
		case <-late:
			if t.then != nil {
				t.then()
			}
		}
	}
	if !a.prompts.spawn(work) {
		// Run has ended: this replica takes no more taps, and one
		// again reaches a replica that does.
		a.answerCallback(ctx, cq, card.RefusalNote(errStopping))
		return true
	}
	select {
	case t := <-done:
		switch {
		case t.seen == core.OnceHeld:
			a.answerHeld(ctx, cq)
			return false
		case t.again:
			return false
		case t.seen == core.OnceDone:
			return true
		}
		if !toldHeld(ctx) {
			a.answerCallback(ctx, cq, t.note)
		}
		if t.then != nil {
			go t.then()
		}
	case <-a.tapBudget():
		close(late)
		a.log.Warn().Msg("telegram: a tap's store work outlasted its budget; the tapper was told it may or may not be recorded")
		if !toldHeld(ctx) {
			a.answerCallback(ctx, cq, card.TimedOutNote)
		}
	}
	return true
}

// answerCallback answers callback query cq with note.
func (a *Adapter) answerCallback(ctx context.Context, cq *tgbotapi.CallbackQuery, note string) {
	if _, err := a.api(ctx).Request(tgbotapi.NewCallback(cq.ID, cutPlain(note, MaxCallbackText))); err != nil {
		a.log.Warn().Err(err).Msg("telegram: answerCallbackQuery failed")
	}
}

// tap turns a tap into a call to core. It returns what to tell the tapper,
// and what to do, off the update's goroutine, once they are told (or nil),
// and the error of core's call, if any, for settle to weigh. thread is
// the forum topic of the tapped card (0: none).
func (a *Adapter) tap(ctx context.Context, cq *tgbotapi.CallbackQuery, thread int) (string, func(), error) {
	if cq.From == nil {
		return card.RefusalNote(core.ErrNotFound), nil, nil
	}
	r, err := core.DecodeRef(cq.Data)
	if err != nil {
		return card.RefusalNote(err), nil, nil
	}
	q, err := a.svc.Get(ctx, r.QuestionID)
	if err != nil {
		a.logUnlessAgain(ctx, err, "get")
		return card.RefusalNote(err), nil, err
	}
	if note, ok := onCard(q, r, cq); !ok {
		// Nothing reaches core: this is no attempt at this question.
		return note, nil, nil
	}
	d := decider(cq.From)
	var out core.Outcome
	switch r.Action {
	case core.RefText, core.RefEdit:
		note, then := a.openPrompt(ctx, q, r, d, cq, thread)
		return note, then, nil
	case core.RefDecline:
		out, err = a.svc.Decline(ctx, q.ID, d)
	default:
		in, ferr := core.AnswerFor(q, r, d, "")
		if ferr != nil {
			return card.RefusalNote(ferr), nil, nil
		}
		out, err = a.svc.Answer(ctx, in)
	}
	if err != nil {
		a.logUnlessAgain(ctx, err, "answer")
		return card.RefusalNote(err), nil, err
	}
	return card.RecordedNote(out.Question, r), nil, nil
}

// onCard decides whether tap cq, whose data decoded to r, may act on q
// (card.ClickCounts), and if not, what the tapper is told. Only cards
// carry buttons (reminders, prompts and notes have none). Telegram says
// what a message shows unless it is too old to (an InaccessibleMessage:
// chat and id alone, date 0); such a message, if it is one of q's cards,
// shows the card as q now stands, as the outbox's edits keep it.
func onCard(q *core.Question, r core.Ref, cq *tgbotapi.CallbackQuery) (string, bool) {
	m := cq.Message
	if m == nil || m.Chat == nil {
		return card.NotOnCardNote, false
	}
	ref, ofCard := cardRef(q, m)
	carried := carries(m.ReplyMarkup, cq.Data)
	if !carried && ofCard && m.Date == 0 {
		e, err := RenderEdit(card.New(q, ref), m.Chat.ID, m.MessageID)
		carried = err == nil && carries(e.ReplyMarkup, cq.Data)
	}
	return card.ClickCounts(q, r, carried, ofCard)
}

// carries reports whether keyboard kb has a button whose data is data.
func carries(kb *tgbotapi.InlineKeyboardMarkup, data string) bool {
	if kb == nil {
		return false
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData != nil && *b.CallbackData == data {
				return true
			}
		}
	}
	return false
}

// cardRef finds m among q's cards: its record, and whether it is one.
func cardRef(q *core.Question, m *tgbotapi.Message) (core.MessageRef, bool) {
	id := strconv.Itoa(m.MessageID)
	for _, c := range q.Messages {
		if c.Surface != core.SurfaceTelegram || c.ID != id {
			continue
		}
		if to, err := parseRoom(c.Room); err == nil && to.chat == m.Chat.ID {
			return c, true
		}
	}
	return core.MessageRef{}, false
}

// openPrompt answers a "Reply to answer" or "Something else" tap with a
// ForceReply prompt for the tapper, in the card's topic (thread) if it is
// in one. Core checks again when the reply comes.
// A prompt is promised only if it can be sent soon (promptWait) and a
// place to wait is free (maxPrompts, and the chat's share of them,
// maxChatPrompts); otherwise the tapper is told that none follows, and
// how else to answer.
func (a *Adapter) openPrompt(ctx context.Context, q *core.Question, r core.Ref, d core.Decider, cq *tgbotapi.CallbackQuery, thread int) (string, func()) {
	switch {
	case !q.Open() || !a.svc.MayAnswer(q, d):
		// Go through the chokepoint, which refuses before it looks at
		// the (empty) answer, so the refusal is recorded like any other
		// (law 6) and the note tells the truth.
		if r.Action == core.RefEdit {
			return card.RefusalNote(a.svc.Refusal(ctx, q, d)), nil
		}
		in, err := core.AnswerFor(q, r, d, "")
		if err == nil {
			_, err = a.svc.Answer(ctx, in)
		}
		return card.RefusalNote(err), nil
	case cq.Message == nil || cq.Message.Chat == nil:
		return "Reply prompts work on the question's card in its chat only.", nil
	}
	if note, done := card.PartDoneNote(q, r); done {
		return note, nil
	}
	chat := cq.Message.Chat.ID
	prompt, err := RenderPrompt(card.New(q, core.MessageRef{}), r, chat, cq.Message.MessageID, cq.From)
	if err != nil {
		return card.RefusalNote(core.ErrNotFound), nil
	}
	if a.lim.delay(chat, time.Now()) > promptWait || !a.prompts.hold(chat) {
		a.log.Warn().Str("question", string(q.ID)).Int64("chat", chat).
			Msg("telegram: no reply prompt: the chat's send budget is spent, or too many prompts wait")
		return noPrompt(cq.Message, r, a.bot.Self.ID), nil
	}
	note := "Reply to the prompt that follows with your answer."
	if r.Action == core.RefEdit {
		note = "Reply to the prompt that follows with the arguments as JSON."
	}
	return note, func() { a.sendPrompt(place{chat: chat, thread: thread}, prompt, q.ID) }
}

// noPrompt tells a tapper that no prompt follows, and how else to answer:
// by replying to the card itself when a reply to it answers what they
// tapped (replyRef: a card with one free-text button), else by tapping
// again later.
func noPrompt(cardMsg *tgbotapi.Message, r core.Ref, self int64) string {
	if got, ok := replyRef(cardMsg, self); ok && got == r {
		return "No prompt can be sent in this chat just now: reply to the question itself with your answer."
	}
	return "No prompt can be sent in this chat just now: tap again in a minute."
}

// onReply takes a reply to one of the bot's prompts (or to a
// clarification's card, or its reminder) as the answer to exactly the
// question, and form item, that message's ref names. A reply to a
// reminder that carries no ref, and any other message in a private chat
// with the bot, is told how to answer. A reply whose question could not
// be read or whose answer could not be stored, while polling (again), is
// told nothing yet: its error goes back (settle), and the reply is
// handled again when the poller fetches it again.
func (a *Adapter) onReply(ctx context.Context, m said) error {
	if m.Chat != nil && anonymous(m.Message) {
		// Not a person's: nothing reaches core, but one who answered a
		// question so is told why it did not count, and how it would.
		if _, ok := replyRef(m.ReplyToMessage, a.bot.Self.ID); ok {
			a.tell(m, anonymousNote)
		}
		return nil
	}
	if m.From == nil || m.From.IsBot || m.Chat == nil {
		return nil
	}
	r, ok := replyRef(m.ReplyToMessage, a.bot.Self.ID)
	if !ok {
		switch {
		case isReminder(m.ReplyToMessage, a.bot.Self.ID):
			a.tell(m, noReplyNote)
		case inPrivate(m.Message):
			a.tell(m, privateNote)
		}
		return nil // not a reply to one of our prompts
	}
	q, err := a.svc.Get(ctx, r.QuestionID)
	if a.again(ctx, err) {
		return err
	}
	if err != nil {
		a.tellReplier(m, "get", err)
		return nil
	}
	if m.Text == "" {
		// A photo, a file, a sticker, a voice note (with a caption or
		// without).
		a.tellReplier(m, "reply", card.RefuseNotText(ctx, a.svc, q, decider(m.From)))
		return nil
	}
	in, err := core.AnswerFor(q, r, decider(m.From), replyText(m.Message))
	if err != nil {
		// The prompt's ref does not fit q: nothing reaches core, and the
		// replier is told why, as a tapper is.
		a.tellReplier(m, "reply", err)
		return nil
	}
	_, err = a.svc.Answer(ctx, in)
	switch {
	case err == nil:
		// The card's edit, through the outbox, is the confirmation.
	case a.again(ctx, err):
		// Not recorded, or not known to be: handled again when the
		// poller fetches the reply again.
		return err
	case core.ErrorCode(err) == core.CodeForbidden && !m.Chat.IsPrivate():
		// Refused and recorded by core; a group is not told about it.
		// In a private chat only the replier would read the note.
	case core.ErrorCode(err) == core.CodeConflict && a.toldSplit(ctx, r, m):
		// A later part of a text Telegram split (split.go).
	default:
		// Closed, expired, already answered, blank, or not recorded
		// at all (in webhook mode, again): say so to the replier.
		a.tellReplier(m, "answer", err)
	}
	return nil
}

// toldSplit tells the writer of reply m, refused because the part of the
// question r names has its answer, that m is a later part of their own
// text Telegram split (splitTail), if it is; it reports whether it did.
func (a *Adapter) toldSplit(ctx context.Context, r core.Ref, m said) bool {
	q, err := a.svc.Get(ctx, r.QuestionID)
	if err != nil {
		return false
	}
	note, ok := splitTail(q, r, m.Message)
	if ok {
		a.tell(m, note)
	}
	return ok
}

// noReplyNote answers a reply to a reminder whose question takes no
// reply there (isReminder).
const noReplyNote = "A reply to this reminder is not recorded: use the buttons on the question's card, or askbridge's console or API."

// isReminder reports whether to is one of the bot's reminders: only the
// bot's markup starts a message of its own with the reminder's heading.
func isReminder(to *tgbotapi.Message, self int64) bool {
	return to != nil && to.From != nil && to.From.ID == self && self != 0 &&
		strings.HasPrefix(to.Text, reminderMark+card.ReminderHeading)
}

// tellReplier logs err from op if it is internal and answers reply m with
// why it was not recorded.
func (a *Adapter) tellReplier(m said, op string, err error) {
	a.logInternal(err, op)
	a.tell(m, card.RefusalNote(err))
}

// tell answers reply m with text, in m's topic if it is in one. The note
// may quote an outcome, which may hold an agent's or a person's words, so
// it is escaped as cards are (esc: an @name mentions nobody).
func (a *Adapter) tell(m said, text string) {
	note := tgbotapi.NewMessage(m.Chat.ID, esc(text, 1000))
	note.ParseMode = tgbotapi.ModeHTML
	note.ReplyToMessageID = m.MessageID
	note.AllowSendingWithoutReply = true
	notSent := func(err error) { a.log.Warn().Err(err).Msg("telegram: refusal note not sent") }
	// Sent off the update's goroutine, as a reply prompt is: waiting
	// there on the chat's budget held up every update after it.
	if !a.prompts.hold(m.Chat.ID) {
		notSent(errors.New("too many messages wait on their send budgets"))
		return
	}
	go a.sendHeld(m.where(), note, notSent)
}

// logUnlessAgain is logInternal for a failure that, handled again when
// its update comes again, settle logs instead.
func (a *Adapter) logUnlessAgain(ctx context.Context, err error, op string) {
	if !a.again(ctx, err) {
		a.logInternal(err, op)
	}
}

func (a *Adapter) logInternal(err error, op string) {
	var ce *core.ClosedError
	if core.ErrorCode(err) == core.CodeInternal && !errors.As(err, &ce) {
		a.log.Error().Err(err).Str("op", op).Msg("telegram: core failed")
	}
}
