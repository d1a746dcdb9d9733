package telegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Telegram's limits that rendering keeps.
const (
	// MaxText is sendMessage's and editMessageText's text limit. It is
	// counted here on the escaped HTML in UTF-16 units, which is never less
	// than what Telegram counts (the text after entity parsing).
	MaxText = 4096
	// MaxCallbackData is callback_data's limit in bytes (1-64).
	MaxCallbackData = 64
	// MaxCallbackText is answerCallbackQuery's text limit.
	MaxCallbackText = 200
	// maxLabel keeps button labels readable on a phone.
	maxLabel = 60
	// maxPlaceholder is ForceReply's input_field_placeholder limit.
	maxPlaceholder = 64
)

// refPrefix starts the machine-readable last line of a prompt (and of a
// clarification's card): "ref: " and an encoded core.Ref. A reply to such a
// message is matched to its question by that line alone, so the match
// survives restarts and works on any replica.
const refPrefix = "ref: "

// refLine is the trailer that carries a ref: underlined, which only our
// markup can make (see PromptRef).
func refLine(ref string) string { return refPrefix + "<u>" + ref + "</u>" }

// ErrBadButton is returned when a button's value would not be a valid
// callback_data: an empty ref (the ref could not be encoded) or one longer
// than 64 bytes.
var ErrBadButton = errors.New("telegram: refusing to render a button without a valid ref")

// Telegram counts its limits in UTF-16 code units.
const unit = textlimit.UTF16

// units is a text's length as Telegram counts it.
func units(s string) int { return unit.Len(s) }

// ellipsis marks a cut text.
const ellipsis = textlimit.Ellipsis

// esc escapes s for parse_mode HTML and cuts it so the escaped text is at
// most max units, never inside an entity or a rune; a cut text ends in an
// ellipsis. max <= 0 gives "".
func esc(s string, max int) string { return unit.CutEscaped(s, max, escapeRune) }

func escapeRune(_, r rune) string { return html.EscapeString(string(r)) }

// cutPlain cuts unescaped text (button labels, callback answers,
// placeholders) to max units, rune-safe.
func cutPlain(s string, max int) string { return unit.Cut(s, max) }

// doc assembles a message's HTML within a budget of units. Markup is
// trusted (ours); text is escaped and cut to fit. Once something does not
// fit, the rest is left out, so tags always stay balanced.
type doc struct {
	b    strings.Builder
	left int
	full bool
}

func newDoc(budget int) *doc { return &doc{left: budget} }

// markup adds trusted HTML if it fits whole.
func (d *doc) markup(s string) {
	if d.full {
		return
	}
	if n := units(s); n <= d.left {
		d.b.WriteString(s)
		d.left -= n
		return
	}
	d.full = true
}

// text adds open + escaped(s) + close, with s cut to at most max units
// and to what is left. Nothing is added if not even a short cut fits.
func (d *doc) text(open, s, close string, max int) {
	if d.full || s == "" {
		return
	}
	room := d.left - units(open) - units(close)
	if room > max {
		room = max
	}
	e := esc(s, room)
	if e == "" || e == ellipsis && s != ellipsis {
		d.full = true
		return
	}
	d.markup(open + e + close)
}

func (d *doc) String() string { return d.b.String() }

// stateIcon prefixes a closed card's outcome line.
func stateIcon(s core.State) string {
	switch s {
	case core.StateAnswered:
		return "✅"
	case core.StateDeclined:
		return "↩️"
	case core.StateTimedOut:
		return "⌛"
	case core.StateExpired:
		return "⏹"
	case core.StateCancelled:
		return "🚫"
	}
	return ""
}

// trailer is what must survive any cut: the outcome of a closed question,
// a form's progress, and a clarification's ref line.
func trailer(q *core.Question) string {
	var b strings.Builder
	if q.State.Closed() {
		b.WriteString("\n\n" + stateIcon(q.State) + " <b>" + esc(core.OutcomeLine(q), 400) + "</b>")
		if choice := core.ChoiceLabel(q); choice != "" && q.State == core.StateAnswered {
			label := "Answer"
			if q.Kind == core.KindDecision {
				label = "Chosen"
			}
			b.WriteString("\n" + label + ": " + esc(choice, 1200))
		}
		if r := q.Resolution; r != nil && r.Reason != "" && q.State == core.StateAnswered {
			b.WriteString("\nNote: " + esc(r.Reason, 300))
		}
	} else if q.Kind == core.KindForm {
		done, total := core.Progress(q)
		if done > 0 {
			fmt.Fprintf(&b, "\n\n<i>Answered %d/%d</i>", done, total)
		}
	}
	if q.Kind == core.KindClarification {
		if ref := (core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}).Encode(); ref != "" {
			b.WriteString("\n\n" + refLine(ref))
		}
	}
	return b.String()
}

// cardText is the card's HTML: kind, hard-to-reverse marker, who asks and
// for what, the question, what to choose from, and the trailer.
func cardText(q *core.Question, note string) string {
	tail := trailer(q)
	d := newDoc(MaxText - units(tail))
	if note != "" {
		d.markup("<i>" + note + "</i>\n")
	}
	d.markup("<b>" + html.EscapeString(core.KindTitle(q.Kind)) + "</b>")
	if q.Reversibility == core.HardToReverse {
		d.markup("\n⚠️ <b>" + core.HardToReverseMarker + "</b>")
	}
	d.text("\nAgent: <code>", q.Agent, "</code>", 150)
	d.text("\nProject: ", q.Labels.Project, "", 150)
	d.text("\nTask: ", q.Labels.Task, "", 150)
	d.text("\n\n<b>", q.Text, "</b>", 2000)
	switch q.Kind {
	case core.KindDecision:
		d.markup("\n\n<b>Options</b>")
		for i, o := range q.Options {
			d.text(fmt.Sprintf("\n%d. <b>", i+1), o.Title, "</b>", 160)
			if o.Recommended {
				d.markup(" ★ recommended")
			}
			d.text("\n", o.Writeup, "", 400)
		}
	case core.KindApproval:
		if q.Call != nil {
			d.text("\n\nTool: <code>", q.Call.Tool, "</code>", 130)
			d.text("\n<pre>", prettyJSON(q.Call.Arguments), "</pre>", 1200)
		}
	case core.KindForm:
		for i, it := range q.Items {
			d.text(fmt.Sprintf("\n\n<b>%d. ", i+1), it.Question, "</b>", 300)
			if a, ok := q.Answered(it.ID); ok {
				d.text(" ✓ ", itemAnswerLabel(it, a), "", 200)
				continue
			}
			for _, o := range it.Options {
				d.text("\n• ", o.Label, "", 100)
				if o.Recommended {
					d.markup(" ★")
				}
				d.text(" — ", o.Description, "", 200)
			}
		}
	}
	d.text("\n\n<i>", q.Context, "</i>", MaxText)
	return d.String() + tail
}

func itemAnswerLabel(it core.FormItem, a core.ItemAnswer) string {
	for _, o := range it.Options {
		if o.ID == a.OptionID {
			return o.Label
		}
	}
	return a.Text
}

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// button is one inline button carrying exactly r's encoding, or an error if
// r cannot be a callback_data.
func button(label string, r core.Ref) (tgbotapi.InlineKeyboardButton, error) {
	data := r.Encode()
	if data == "" || len(data) > MaxCallbackData {
		return tgbotapi.InlineKeyboardButton{}, ErrBadButton
	}
	return tgbotapi.NewInlineKeyboardButtonData(cutPlain(label, maxLabel), data), nil
}

// Button labels.
const (
	LabelReply   = "Reply to answer"
	LabelApprove = "✅ Approve"
	LabelDeny    = "❌ Deny"
	LabelDecline = "Decline: agent decides"
	LabelOther   = "Something else"
)

// keyboard is the inline keyboard of an open question: one row per
// decision option or form item, Approve and Deny, or "Reply to answer".
// A closed question has no rows (the buttons are removed).
func keyboard(q *core.Question) (tgbotapi.InlineKeyboardMarkup, error) {
	rows := [][]tgbotapi.InlineKeyboardButton{}
	if !q.Open() {
		return tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}, nil
	}
	var err error
	add := func(row ...tgbotapi.InlineKeyboardButton) { rows = append(rows, row) }
	mk := func(label string, r core.Ref) tgbotapi.InlineKeyboardButton {
		r.QuestionID = q.ID
		b, e := button(label, r)
		err = errors.Join(err, e)
		return b
	}
	switch q.Kind {
	case core.KindClarification:
		add(mk(LabelReply, core.Ref{Item: -1, Action: core.RefText}))
	case core.KindDecision:
		for i, o := range q.Options {
			label := o.Title
			if o.Recommended {
				label = "★ " + label + " (recommended)"
			}
			add(mk(label, core.Ref{Item: -1, Action: core.RefOption, Option: i}))
		}
	case core.KindApproval:
		add(mk(LabelApprove, core.Ref{Item: -1, Action: core.RefApprove}),
			mk(LabelDeny, core.Ref{Item: -1, Action: core.RefDeny}))
	case core.KindForm:
		for i, it := range q.Items {
			if _, done := q.Answered(it.ID); done {
				continue
			}
			prefix := ""
			if len(q.Items) > 1 {
				prefix = fmt.Sprintf("%d. ", i+1)
			}
			var row []tgbotapi.InlineKeyboardButton
			for j, o := range it.Options {
				label := prefix + o.Label
				if o.Recommended {
					label += " ★"
				}
				row = append(row, mk(label, core.Ref{Item: i, Action: core.RefOption, Option: j}))
			}
			row = append(row, mk(prefix+LabelOther, core.Ref{Item: i, Action: core.RefText}))
			add(row...)
		}
	}
	if q.Kind != core.KindApproval {
		add(mk(LabelDecline, core.Ref{Item: -1, Action: core.RefDecline}))
	}
	if err != nil {
		return tgbotapi.InlineKeyboardMarkup{}, err
	}
	return tgbotapi.InlineKeyboardMarkup{InlineKeyboard: rows}, nil
}

// RenderCard is the sendMessage request that posts q's card in chat. note,
// if set, is a trusted line shown above the card (an escalation).
func RenderCard(q *core.Question, chat int64, note string) (tgbotapi.MessageConfig, error) {
	m := tgbotapi.NewMessage(chat, cardText(q, note))
	m.ParseMode = tgbotapi.ModeHTML
	m.DisableWebPagePreview = true
	kb, err := keyboard(q)
	if err != nil {
		return m, err
	}
	if len(kb.InlineKeyboard) > 0 {
		m.ReplyMarkup = kb
	}
	return m, nil
}

// RenderEdit is the editMessageText request that brings card (chat, id) up
// to date with q: a form's progress while open, or who answered what and
// when once closed, with the buttons removed (an empty keyboard).
func RenderEdit(q *core.Question, chat int64, id int) (tgbotapi.EditMessageTextConfig, error) {
	kb, err := keyboard(q)
	if err != nil {
		return tgbotapi.EditMessageTextConfig{}, err
	}
	e := tgbotapi.NewEditMessageTextAndMarkup(chat, id, cardText(q, ""), kb)
	e.ParseMode = tgbotapi.ModeHTML
	e.DisableWebPagePreview = true
	return e, nil
}

// RenderPrompt is the ForceReply message that asks for free text: for a
// clarification's answer or a form item's "something else". It replies to
// the card (replyTo) and mentions who tapped (to, if any) so a selective
// ForceReply opens their keyboard only. Its last line carries the ref.
func RenderPrompt(q *core.Question, r core.Ref, chat int64, replyTo int, to *tgbotapi.User) (tgbotapi.MessageConfig, error) {
	if r.Action != core.RefText || r.QuestionID != q.ID {
		return tgbotapi.MessageConfig{}, ErrBadButton
	}
	ref := r.Encode()
	if ref == "" {
		return tgbotapi.MessageConfig{}, ErrBadButton
	}
	about := q.Text
	if r.Item >= 0 && r.Item < len(q.Items) {
		about = q.Items[r.Item].Question
	}
	tail := "\n" + refLine(ref)
	d := newDoc(MaxText - units(tail))
	if to != nil {
		d.text(fmt.Sprintf(`<a href="tg://user?id=%d">`, to.ID), displayName(to), "</a>, ", 64)
		d.markup("reply to this message with your answer to:")
	} else {
		d.markup("Reply to this message with your answer to:")
	}
	d.text("\n<i>", about, "</i>", 500)
	m := tgbotapi.NewMessage(chat, d.String()+tail)
	m.ParseMode = tgbotapi.ModeHTML
	m.ReplyToMessageID = replyTo
	m.AllowSendingWithoutReply = true
	m.ReplyMarkup = tgbotapi.ForceReply{ForceReply: true, Selective: to != nil,
		InputFieldPlaceholder: cutPlain("Your answer", maxPlaceholder)}
	return m, nil
}

// RenderReminder is the reminder for a still-open q, as a reply to its
// card in chat when there is one (cardID 0 when not).
func RenderReminder(q *core.Question, chat int64, cardID int) tgbotapi.MessageConfig {
	d := newDoc(MaxText)
	d.markup("⏰ <b>" + core.ReminderHeading + "</b>")
	if q.Reversibility == core.HardToReverse {
		d.markup(" (⚠️ " + core.HardToReverseMarker + ")")
	}
	d.markup("\n" + html.EscapeString(core.KindTitle(q.Kind)) + ": ")
	d.text("", q.Text, "", 300)
	if cardID == 0 {
		d.markup("\nThe question's card was not found here; answer it from askbridge's console or API: id ")
		d.text("<code>", q.ID, "</code>", 40)
	}
	m := tgbotapi.NewMessage(chat, d.String())
	m.ParseMode = tgbotapi.ModeHTML
	m.ReplyToMessageID = cardID
	m.AllowSendingWithoutReply = true
	return m
}

// RenderDigest is the "while you were away" summary.
func RenderDigest(dg core.Digest, chat int64) tgbotapi.MessageConfig {
	d := newDoc(MaxText)
	d.markup("📋 <b>" + core.DigestHeading + "</b>")
	d.markup(fmt.Sprintf("\n%s to %s", dg.From.UTC().Format("2006-01-02 15:04 UTC"), dg.To.UTC().Format("2006-01-02 15:04 UTC")))
	d.markup(fmt.Sprintf("\nAsked: %d · Closed: %d · Still open: %d", len(dg.Asked), len(dg.Closed), len(dg.Open)))
	section := func(title string, qs []*core.Question, closed bool) {
		if len(qs) == 0 {
			return
		}
		d.markup("\n\n<b>" + title + "</b>")
		for _, q := range qs {
			marker := ""
			if q.Reversibility == core.HardToReverse {
				marker = "⚠️ "
			}
			d.text("\n• "+marker, q.Text, "", 120)
			if closed {
				d.text(" — ", core.OutcomeLine(q), "", 160)
			}
		}
	}
	section("Still open", dg.Open, false)
	section("Closed", dg.Closed, true)
	m := tgbotapi.NewMessage(chat, d.String())
	m.ParseMode = tgbotapi.ModeHTML
	return m
}

// displayName is how a Telegram user is named on cards and in the log.
func displayName(u *tgbotapi.User) string {
	if u == nil {
		return ""
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.UserName
	}
	return name
}
