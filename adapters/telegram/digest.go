package telegram

import (
	"fmt"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// RenderDigest is the "while you were away" summary: the counts (a
// list core stopped reading at its cap gives a floor, said as one), then
// the open and the closed questions, as many as fit, and how many more
// it does not list.
func RenderDigest(dg core.Digest, chat int64) tgbotapi.MessageConfig {
	d := newDoc(MaxText)
	d.markup("📋 <b>" + card.DigestHeading + "</b>")
	d.markup(fmt.Sprintf("\n%s to %s", dg.From.UTC().Format(timeLayout), dg.To.UTC().Format(timeLayout)))
	d.markup(fmt.Sprintf("\nAsked: %s · Closed: %s · Still open: %s",
		card.DigestCount(len(dg.Asked), dg.AskedMore), card.DigestCount(len(dg.Closed), dg.ClosedMore), card.DigestCount(len(dg.Open), dg.OpenMore)))
	type line struct {
		html string
		item bool // a question, not a section's heading
	}
	var lines []line
	section := func(title string, qs []*core.Question, closed bool) {
		if len(qs) == 0 {
			return
		}
		lines = append(lines, line{html: "\n\n<b>" + title + "</b>"})
		for _, q := range qs {
			marker := ""
			if q.Reversibility == core.HardToReverse {
				marker = "⚠️ "
			}
			l := "\n• " + marker + esc(q.Text, 120)
			if closed {
				l += " — " + esc(card.OutcomeLine(q), 160)
			}
			lines = append(lines, line{html: l, item: true})
		}
	}
	section("Still open", dg.Open, false)
	section("Closed", dg.Closed, true)
	floor := dg.OpenMore || dg.ClosedMore
	more := func(left int) string {
		if s := card.DigestNotListed(left, floor); s != "" {
			return "\n" + s
		}
		return ""
	}
	left := len(dg.Open) + len(dg.Closed) // not listed yet
	for _, l := range lines {
		after := left
		if l.item {
			after--
		}
		if units(l.html)+units(more(after)) > d.left {
			break
		}
		d.markup(l.html)
		left = after
	}
	d.markup(more(left))
	return htmlMessage(chat, d.String())
}
