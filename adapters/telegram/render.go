package telegram

import (
	"errors"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
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

// escapeRune escapes r, after prev, for parse_mode HTML. An @ that
// Telegram could read as a mention becomes the full-width ＠: Telegram
// turns "@name" in a message into a mention that notifies that person,
// and text from an agent or a person must notify nobody. Its rule is
// tdlib's match_mentions: an @ after anything but a word character (a
// letter, a number of any kind, or '_'), punctuation such as "cc.@name"
// included. An @ after a word character mentions nobody, so an e-mail
// address stays as written.
func escapeRune(prev, r rune) string {
	if r == '@' && !unicode.IsLetter(prev) && !unicode.IsNumber(prev) && prev != '_' {
		return "＠"
	}
	return html.EscapeString(string(r))
}

// escIn is esc for text that follows open. Inside <pre> or <code>,
// where Telegram makes no mentions, it only escapes HTML: an "@" there
// stays as written, so arguments copied from a card or an edit prompt
// are those asked, not a changed value.
func escIn(open, s string, max int) string {
	if strings.HasSuffix(open, "<pre>") || strings.HasSuffix(open, "<code>") {
		return unit.CutEscaped(s, max, func(_, r rune) string { return html.EscapeString(string(r)) })
	}
	return esc(s, max)
}

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
	d.textWith(open, s, close, max, func(n int) string { return escIn(open, s, n) })
}

// textWith is text with s escaped and cut to n units by esc.
func (d *doc) textWith(open, s, close string, max int, esc func(n int) string) {
	if d.full || s == "" {
		return
	}
	room := d.left - units(open) - units(close)
	if room > max {
		room = max
	}
	e := esc(room)
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
func trailer(c card.Card) string {
	var b strings.Builder
	if c.Tally != nil {
		b.WriteString("\n")
		for _, l := range c.Tally.Lines {
			b.WriteString("\n🗳 " + esc(l, 300))
		}
	}
	if o := c.Outcome; o != nil {
		b.WriteString("\n\n" + stateIcon(o.State) + " <b>" + esc(o.Line, 400) + "</b>")
		if o.Label != "" {
			b.WriteString("\n" + o.Label + ": " + esc(o.Choice, 1200))
		}
		if o.Reason != "" {
			b.WriteString("\nReason: " + esc(o.Reason, 300))
		}
	} else if c.Progress != nil {
		b.WriteString("\n\n<i>" + c.Progress.String() + "</i>")
	}
	b.WriteString(clarificationRef(c))
	return b.String()
}

// clarificationRef is the ref line a clarification's card ends with, so
// that a reply to it is the answer, or "" for any other kind.
func clarificationRef(c card.Card) string {
	if c.Kind != core.KindClarification {
		return ""
	}
	if ref := (core.Ref{QuestionID: c.QuestionID, Item: -1, Action: core.RefText}).Encode(); ref != "" {
		return "\n\n" + refLine(ref)
	}
	return ""
}

// cardText is the card's HTML: kind and markers, who asks and for what,
// the question, what to choose from, and the trailer. The body is
// planned before it is written (fit), so that the question and every
// call, option and item the keyboard has buttons for shows: its numbered
// line (a call's tool and hash, an option's title and marker, an item's
// question and its choices' labels) always, the long texts (arguments,
// write-ups, descriptions) cut evenly to what is left. The context comes
// last and gets what remains: of all the parts it is the one a person can
// best do without. off is tooLongToEdit(c). A call whose arguments
// cannot show enough of themselves beside its buttons is left out
// (layout); out are those calls' section indexes, whose buttons the
// keyboard must leave out (leftOff).
func cardText(c card.Card, off map[core.Ref]bool) (text string, out []int) {
	tail := trailer(c)
	d := newDoc(MaxText - units(tail))
	d.markup("<b>" + html.EscapeString(c.Heading) + "</b>")
	for _, m := range c.Markers {
		if m.Warning() {
			d.markup("\n⚠️ <b>" + html.EscapeString(m.Text()) + "</b>")
		} else {
			d.markup("\n<i>" + html.EscapeString(m.Text()) + "</i>")
		}
	}
	d.text("\nAgent: <code>", string(c.Meta.Agent), "</code>", 150)
	d.text("\nRun: <code>", string(c.Meta.RunID), "</code>", 150)
	d.text("\nProject: ", c.Meta.Labels.Project, "", 150)
	d.text("\nTask: ", c.Meta.Labels.Task, "", 150)
	if !c.Meta.Deadline.IsZero() {
		d.markup("\nAnswer by: " + c.Meta.Deadline.UTC().Format(timeLayout))
	}
	ps := body(c, off)
	measure(ps, d.left)
	out = d.layout(c, ps)
	for _, s := range c.Sections {
		if s.Kind == card.SectionContext {
			d.text("\n\n<i>", s.Body, "</i>", MaxText)
		}
	}
	return d.String() + tail, out
}

// body is the card's question and sections (the context aside), as
// pieces to plan and write; off is tooLongToEdit(c).
func body(c card.Card, off map[core.Ref]bool) []piece {
	// The question itself is never left out: it is cut evenly with what
	// the buttons are for, not with what explains them.
	ps := []piece{keyPiece("\n\n<b>", c.Text, "</b>", 2000)}
	options := false
	for i, s := range c.Sections {
		from := len(ps)
		switch s.Kind {
		case card.SectionContext:
			// last, in cardText
		case card.SectionOption:
			if !options {
				ps = append(ps, markupPiece("\n\n<b>Options</b>"))
				options = true
			}
			ps = append(ps, keyPiece(fmt.Sprintf("\n%d. <b>", s.Index+1), s.Title, "</b>", 160))
			if s.Recommended {
				ps = append(ps, markupPiece(html.EscapeString(card.RecommendedNote)))
			}
			ps = append(ps, longPiece("\n", s.Body, "", 400))
		case card.SectionCall:
			num := ""
			if c.Progress != nil { // one call of a batch
				num = fmt.Sprintf("%d. ", s.Index+1)
			}
			tool := keyPiece("\n\n"+num+"Tool: <code>", s.Title, "</code>", maxToolUnits)
			tool.tool = true
			ps = append(ps, tool)
			ps = append(ps, callPiece(s.Body, 1200, c.QuestionID))
			if s.Hash != "" {
				ps = append(ps, markupPiece("\nsha256 <code>"+html.EscapeString(s.Hash)+"…</code>"))
			}
			if slices.ContainsFunc(s.Actions, func(a card.Action) bool { return off[a.Ref] }) {
				ps = append(ps, markupPiece("\n<i>"+TooLongToEdit+"</i>"))
			}
			if a := s.Answer; a != nil { // a decided call: approved or denied, so no check mark
				ps = append(ps, keyPiece("\n<b>Decided:</b> ", a.Text, "", 200), keyPiece(" (by ", a.By, ")", 64))
			}
			if len(s.Actions) > 0 {
				buttoned(ps[from:], i)
			}
		case card.SectionItem:
			ps = append(ps, keyPiece(fmt.Sprintf("\n\n<b>%d. ", s.Index+1), s.Title, "</b>", 300))
			if a := s.Answer; a != nil {
				ps = append(ps, keyPiece(" ✓ ", a.Text, "", 200))
				continue
			}
			for _, o := range s.Choices {
				ps = append(ps, keyPiece("\n• ", o.Label, "", 100))
				if o.Recommended {
					ps = append(ps, markupPiece(html.EscapeString(card.RecommendedNote)))
				}
				ps = append(ps, longPiece(" — ", o.Description, "", 200))
			}
		default:
			ps = append(ps, keyPiece("\n\n<b>", s.Title, "</b>", 160), longPiece("\n", s.Body, "", 400))
		}
	}
	return ps
}

const timeLayout = "2006-01-02 15:04 UTC"

// htmlMessage is a sendMessage request of text in parse_mode HTML,
// without link previews: a link in someone's text must not put a preview
// its owner chose under the message.
func htmlMessage(chat int64, text string) tgbotapi.MessageConfig {
	m := tgbotapi.NewMessage(chat, text)
	m.ParseMode = tgbotapi.ModeHTML
	m.DisableWebPagePreview = true
	return m
}

// RenderCard is the sendMessage request that posts a card in chat.
func RenderCard(c card.Card, chat int64) (tgbotapi.MessageConfig, error) {
	off := tooLongToEdit(c)
	text, out := cardText(c, off)
	m := htmlMessage(chat, text)
	kb, err := keyboard(c, leftOff(c, off, out))
	if err != nil {
		return m, err
	}
	if len(kb.InlineKeyboard) > 0 {
		m.ReplyMarkup = kb
	}
	return m, nil
}

// RenderEdit is the editMessageText request that brings card (chat, id) up
// to date: a form's progress while open, or who answered what and when
// once closed, with the buttons removed (an empty keyboard).
func RenderEdit(c card.Card, chat int64, id int) (tgbotapi.EditMessageTextConfig, error) {
	off := tooLongToEdit(c)
	text, out := cardText(c, off)
	kb, err := keyboard(c, leftOff(c, off, out))
	if err != nil {
		return tgbotapi.EditMessageTextConfig{}, err
	}
	e := tgbotapi.NewEditMessageTextAndMarkup(chat, id, text, kb)
	e.ParseMode = tgbotapi.ModeHTML
	e.DisableWebPagePreview = true
	return e, nil
}

// RenderPrompt is the ForceReply message that asks for free text for the
// card's action r: a clarification's answer or a form item's "something
// else". It replies to the card (replyTo) and mentions who tapped (to, if
// any) so a selective ForceReply opens their keyboard only. Its last line
// carries the ref.
func RenderPrompt(c card.Card, r core.Ref, chat int64, replyTo int, to *tgbotapi.User) (tgbotapi.MessageConfig, error) {
	if r.Action != core.RefText && r.Action != core.RefEdit || r.QuestionID != c.QuestionID {
		return tgbotapi.MessageConfig{}, ErrBadButton
	}
	ref := r.Encode()
	if ref == "" {
		return tgbotapi.MessageConfig{}, ErrBadButton
	}
	about := c.Text
	for _, s := range c.Sections {
		if s.Kind == card.SectionItem && s.Index == r.Item {
			about = s.Title
		}
	}
	tail := "\n" + refLine(ref)
	d := newDoc(MaxText - units(tail))
	if r.Action == core.RefEdit {
		return editPrompt(c, r, d, tail, chat, replyTo, to)
	}
	askTo(d, to, "reply to this message with your answer to:")
	d.text("\n<i>", about, "</i>", 500)
	d.markup(longReplyNote(c.QuestionID))
	return promptMessage(chat, d.String()+tail, replyTo, to, "Your answer"), nil
}

// askTo starts a prompt: the tapper's mention (so a selective ForceReply
// opens their keyboard only) and what to reply with, or that alone,
// capitalised, when nobody tapped.
func askTo(d *doc, to *tgbotapi.User, ask string) {
	if to != nil {
		d.text(fmt.Sprintf(`<a href="tg://user?id=%d">`, to.ID), displayName(to), "</a>, ", 64)
		d.markup(ask)
		return
	}
	d.markup(strings.ToUpper(ask[:1]) + ask[1:])
}

// promptMessage is a ForceReply prompt of HTML text, in reply to the
// card.
func promptMessage(chat int64, html string, replyTo int, to *tgbotapi.User, placeholder string) tgbotapi.MessageConfig {
	m := htmlMessage(chat, html)
	m.ReplyToMessageID = replyTo
	m.AllowSendingWithoutReply = true
	m.ReplyMarkup = tgbotapi.ForceReply{ForceReply: true, Selective: to != nil,
		InputFieldPlaceholder: cutPlain(placeholder, maxPlaceholder)}
	return m
}

// reminderMark starts every reminder, before its heading (isReminder).
const reminderMark = "⏰ "

// RenderReminder is the reminder of a still-open question
// (card.NewReminder), as a reply to its card in chat when there is one.
// It then ends with the ref line its card ends with, if any, so a reply
// to the reminder answers as a reply to the card does. It names as many
// of those it calls on as fit, and counts the rest (a big route).
func RenderReminder(c card.Card, chat int64) tgbotapi.MessageConfig {
	cardID := 0
	if c.ReplyTo != nil {
		cardID, _ = strconv.Atoi(c.ReplyTo.ID)
	}
	tail := ""
	if cardID != 0 {
		tail = clarificationRef(c)
	}
	d := newDoc(MaxText - units(tail))
	d.markup(reminderMark + "<b>" + card.ReminderHeading + "</b>")
	for _, m := range c.Markers {
		if m != card.MarkerReminder && m.Warning() {
			d.markup(" (⚠️ " + html.EscapeString(m.Text()) + ")")
		}
	}
	d.markup("\n" + html.EscapeString(c.Heading) + ": ")
	d.text("", c.Text, "", 300)
	var who []string
	for _, m := range c.Mentions {
		// Telegram has no roles a bot can mention; people are linked by id.
		if m.Safe() && !m.Role {
			name := m.Name
			if name == "" {
				name = m.ID
			}
			who = append(who, `<a href="tg://user?id=`+m.ID+`">`+html.EscapeString(strings.Join(strings.Fields(name), " "))+`</a>`)
		}
	}
	after := "" // kept whole after the names, which get what it leaves
	if cardID == 0 {
		after = "\nThe question's card was not found here; answer it from askbridge's console or API: id <code>" +
			escIn("<code>", string(c.QuestionID), 40) + "</code>"
	}
	if len(who) > 0 {
		label := "\n" + card.AwaitingLabel + ": "
		names, _ := unit.JoinFit(who, ", ", len(who), d.left-units(label+after))
		d.markup(label + names)
	}
	d.markup(after)
	m := htmlMessage(chat, d.String()+tail)
	m.ReplyToMessageID = cardID
	m.AllowSendingWithoutReply = true
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
