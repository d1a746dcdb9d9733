package email

import (
	_ "embed"
	"fmt"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/adapters/internal/textlimit"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// Message is one email as askbridge writes it: a subject and the same
// content as plain text and as HTML.
type Message struct {
	Subject string
	Text    string
	HTML    string
}

// maxSubject keeps a subject readable in an inbox list (runes).
const maxSubject = 120

const timeLayout = "2006-01-02 15:04 UTC"

//go:embed message.txt.tmpl
var textSource string

//go:embed message.html.tmpl
var htmlSource string

var (
	textTmpl = texttemplate.Must(texttemplate.New("text").Funcs(texttemplate.FuncMap{
		"quote": quote, "quoteIn": quoteIn, "line": textlimit.OneLine}).Parse(textSource))
	htmlTmpl = htmltemplate.Must(htmltemplate.New("html").Parse(htmlSource))
)

// view is a card laid out for both templates: the same parts, in the same
// order, in text and in HTML.
type view struct {
	Heading  string
	Warnings []string
	Notes    []string
	Meta     []pair
	Text     string
	Context  string
	Blocks   []block
	Tally    []string
	Progress string
	Outcome  *card.Outcome
	Links    []link
	// Waiting lists who a reminder calls on.
	Waiting string
	// Footer says how the links work, once, at the end.
	Footer string
}

type pair struct{ Key, Value string }

// block is one section of the body: an option, a tool call, a form item.
type block struct {
	Title       string
	Recommended bool
	Body        string
	Pre         bool // arguments: kept as laid out
	Hash        string
	Answer      string // the answer's text
	AnswerBy    string // who gave it
	Choices     []card.Choice
	Links       []link
}

type link struct {
	Label string
	URL   string
	Style card.Style
}

// Links maps each action's ref to the URL that does it, for one
// recipient. A card rendered without links (a closed one) has no actions.
type Links map[core.Ref]string

// footer is the sentence under every card with links.
const footer = "Each link opens a page that asks you to confirm; nothing is recorded until you do. " +
	"The links answer as the address this message was sent to, work once, and stop working when the question closes or at its deadline. " +
	"Do not forward this message. Replies to it are not read: answer through the links."

// RenderCard writes card as an email whose actions are links. Every
// action must have a link: a card is never sent with a dead button.
func RenderCard(c card.Card, links Links) (Message, error) {
	v := view{Heading: c.Heading, Text: c.Text}
	for _, m := range c.Markers {
		if m.Warning() {
			v.Warnings = append(v.Warnings, m.Text())
		} else {
			v.Notes = append(v.Notes, m.Text())
		}
	}
	v.Meta = metaOf(c.Meta)
	// Other recipients' addresses are theirs: whoever is waited on is
	// named, never their address, and an address with no person counted.
	waiting := card.NamedOnly(c.Mentions)
	if len(waiting) > 0 {
		v.Waiting = card.AwaitingLabel + ": " + strings.Join(waiting, ", ")
	}
	var err error
	linksOf := func(as []card.Action) []link {
		var out []link
		for _, a := range as {
			u, ok := links[a.Ref]
			if !ok {
				err = fmt.Errorf("email: no link for the %q action", a.Label)
				continue
			}
			// Replies to the mail are not read: the link says it opens the page.
			out = append(out, link{Label: actionlink.LinkLabel(a.Label), URL: u, Style: a.Style})
		}
		return out
	}
	for _, s := range c.Sections {
		b := block{Title: s.Title, Body: s.Body, Recommended: s.Recommended, Hash: s.Hash, Choices: s.Choices, Links: linksOf(s.Actions)}
		switch s.Kind {
		case card.SectionContext:
			v.Context = s.Body
			continue
		case card.SectionOption:
			b.Title = fmt.Sprintf("%d. %s", s.Index+1, s.Title)
		case card.SectionCall:
			b.Title, b.Pre = "Tool: "+s.Title, true
			if c.Progress != nil { // one call of a batch
				b.Title = fmt.Sprintf("%d. %s", s.Index+1, b.Title)
			}
		case card.SectionItem:
			b.Title = fmt.Sprintf("%d. %s", s.Index+1, s.Title)
		}
		if a := s.Answer; a != nil {
			b.Answer, b.AnswerBy = a.Text, a.By
		}
		v.Blocks = append(v.Blocks, b)
	}
	if c.Tally != nil {
		v.Tally = c.Tally.Lines
	}
	if c.Progress != nil && c.Outcome == nil {
		v.Progress = c.Progress.String()
	}
	v.Outcome = c.Outcome
	v.Links = linksOf(c.Actions)
	if err != nil {
		return Message{}, err
	}
	if len(links) > 0 {
		v.Footer = footer
	}
	return render(subject(c), v)
}

func metaOf(m card.Meta) []pair {
	var out []pair
	add := func(k, v string) {
		if v = textlimit.OneLine(v); v != "" {
			out = append(out, pair{k, v})
		}
	}
	add("Agent", string(m.Agent))
	add("Run", string(m.RunID))
	add("Project", m.Labels.Project)
	add("Task", m.Labels.Task)
	if !m.Deadline.IsZero() {
		add("Answer by", m.Deadline.UTC().Format(timeLayout))
	}
	return out
}

// subject is the heading, the loudest marker and the question, on one
// line an inbox can show. A reminder's is "Re: " and its card's, so
// that mail clients which thread by subject (Gmail) put it under the
// card; its body says it is a reminder.
func subject(c card.Card) string {
	s := c.Heading
	re := ""
	for _, m := range c.Markers {
		if m == card.MarkerReminder {
			re = "Re: "
		} else if m.Warning() {
			s = m.Text() + ": " + s
			break
		}
	}
	if c.Outcome != nil {
		s = "Closed: " + s
	}
	return re + textlimit.Runes.Cut(textlimit.OneLine(s+": "+c.Text), maxSubject)
}

func render(subject string, v view) (Message, error) {
	var t, h strings.Builder
	if err := textTmpl.Execute(&t, v); err != nil {
		return Message{}, err
	}
	if err := htmlTmpl.Execute(&h, v); err != nil {
		return Message{}, err
	}
	return Message{Subject: subject, Text: t.String(), HTML: h.String()}, nil
}

// RenderDigest is the "while you were away" email: what was asked,
// closed and is still open over the period, one line each. A personal
// digest (a person's, across every route) says so in its subject, beside
// a route's digest to the same address.
func RenderDigest(d core.Digest, personal bool) (Message, error) {
	v := view{Heading: card.DigestHeading,
		Text: fmt.Sprintf("From %s to %s: %s asked, %s closed, %s still open.",
			d.From.UTC().Format(timeLayout), d.To.UTC().Format(timeLayout),
			card.DigestCount(len(d.Asked), d.AskedMore), card.DigestCount(len(d.Closed), d.ClosedMore), card.DigestCount(len(d.Open), d.OpenMore))}
	add := func(title string, qs []*core.Question, more bool, line func(*core.Question) string) {
		if len(qs) == 0 {
			return
		}
		var b strings.Builder
		for _, q := range qs {
			b.WriteString("- " + textlimit.Runes.Cut(textlimit.OneLine(q.Text), 200) + line(q) + "\n")
		}
		if more {
			b.WriteString(card.DigestNotListed(0, true))
		}
		v.Blocks = append(v.Blocks, block{Title: title, Body: strings.TrimSuffix(b.String(), "\n")})
	}
	add("Still open", d.Open, d.OpenMore, func(q *core.Question) string { return " (answer by " + q.Deadline.UTC().Format(timeLayout) + ")" })
	add("Closed", d.Closed, d.ClosedMore, func(q *core.Question) string { return ": " + card.OutcomeLine(q) })
	subject := card.DigestHeading
	if personal {
		subject += ": what is open for you"
	}
	return render(subject, v)
}

// In the plain-text part, nothing an agent or a person wrote may start a
// line of its own unmarked: unmarked, an option's write-up, a form
// choice's description or a free answer could lay out a line such as
// "  Approve:" over a URL of its own, which would read as one of
// askbridge's action links just above the footer that vouches for them.
// So every such text is either quoted (quote, quoteIn: each line led by
// "> ") or, where it must be one line (a title, a label, a name), folded
// onto one (textlimit.OneLine) behind askbridge's own words.

// quote marks someone's text off, each line led by "> ".
func quote(s string) string { return quoteIn("", s) }

// quoteIn is quote with each line indented first, for text under an
// indented line (a form choice's description).
func quoteIn(indent, s string) string {
	if s == "" {
		return ""
	}
	s = lineBreaks.Replace(s)
	return indent + "> " + strings.ReplaceAll(s, "\n", "\n"+indent+"> ")
}

// lineBreaks turns every character a mail reader may break a line at
// into "\n", so that quote marks each line it shows.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n",
	"\u0085", "\n", "\u2028", "\n", "\u2029", "\n")
