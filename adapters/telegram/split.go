package telegram

import (
	"fmt"
	"html"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A Telegram client sends a text longer than one message may be (4,096
// characters) as several messages, each cut at a break after half the
// limit, and each a reply to the message that was answered (Telegram
// Desktop's CutPart, and its send loop that gives every part the reply).
// A reply is one answer: the first part to arrive is recorded, through
// the chokepoint like any reply, and it closes the question (or answers
// its item). Nothing joins the parts: a join would hold the answer back,
// unrecorded and untold, for parts that may never come, and a part held
// by one replica must survive its restart and meet the parts another
// replica took in, which only the store can promise. So every prompt
// says so before anyone replies, and a later part, which core refuses
// (the part is answered), is told the truth: the first was recorded, how
// long it was, and how to give a longer answer.

// longReplyNote is the line a prompt for free text about question id
// carries above its ref: how long a reply may be, and how to give a
// longer answer.
func longReplyNote(id core.QuestionID) string {
	return "\n<i>A reply over 4,096 characters reaches askbridge as several messages, and only the first is recorded: " +
		"for a longer answer, use askbridge's console or CLI (<code>" + html.EscapeString(card.ShowCommand(id)) + "</code>).</i>"
}

// minFirstPart is the least a client's first part of a split text holds,
// in UTF-16 units: it cuts after half the limit, then trims the spaces
// at the cut.
const minFirstPart = MaxText/2 - 100

// splitWindow bounds how far apart, by Telegram's date of the later part
// and the time core recorded the first, two parts of one text may be: a
// client sends them one after another, and the window allows for the
// time they wait in line and for the difference of the two clocks.
const splitWindow = 2 * time.Minute

// splitTail is what to tell the writer of reply m, refused for ref r of
// q (as q now stands), when m is a later part of a text Telegram split:
// the part r is for was answered moments before by this same person, in
// free text as long as a first part is. ok is false otherwise, and the
// refusal is told as it is.
func splitTail(q *core.Question, r core.Ref, m *tgbotapi.Message) (note string, ok bool) {
	if m.From == nil || r.Action != core.RefText {
		return "", false
	}
	first, ok := partAnswer(q, r)
	if !ok || !answerNear(m, first) || units(first.Text) < minFirstPart {
		return "", false
	}
	what := "the answer"
	if r.Item >= 0 {
		what = fmt.Sprintf("the answer to item %d", r.Item+1)
	}
	return fmt.Sprintf("Telegram sent your reply as several messages, as it does with one over 4,096 characters, "+
		"and an answer is one message: your first, %d characters, was recorded as %s, and this one was not. "+
		"For a longer answer, use askbridge's console or CLI (%s) rather than a reply.",
		utf8.RuneCountInString(first.Text), what, card.ShowCommand(q.ID)), true
}

// partAnswer is the free-text answer q recorded for the part ref r (a
// prompt's or a card's, RefText) names: a clarification's answer, or a
// form item's. ok is false while that part has none.
func partAnswer(q *core.Question, r core.Ref) (core.ItemAnswer, bool) {
	switch {
	case r.Action != core.RefText:
	case r.Item < 0 && q.Resolution != nil && q.State == core.StateAnswered:
		res := q.Resolution
		return core.ItemAnswer{Text: res.Answer, Decider: res.Decider, At: res.At}, true
	case r.Item >= 0 && r.Item < len(q.Items):
		if a, ok := q.Answered(q.Items[r.Item].ID); ok && a.OptionID == "" {
			return a, true
		}
	}
	return core.ItemAnswer{}, false
}

// answerNear reports whether a is the answer of m's writer, recorded
// within splitWindow of when Telegram says m was sent (a reply is
// recorded as it arrives): m gave it, or is a later part of the text
// that did. A reply of theirs sent long after, refused as the part had
// its answer, is neither.
func answerNear(m *tgbotapi.Message, a core.ItemAnswer) bool {
	d := decider(m.From)
	return a.Decider.Surface == d.Surface && a.Decider.ID == d.ID &&
		a.At.Sub(time.Unix(int64(m.Date), 0)).Abs() <= splitWindow
}
