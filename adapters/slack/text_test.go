package slack

import (
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/slack/slackpreview"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

func TestCutAndEscape(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"a<b", 10, "a&lt;b"},
		{"a<b", 5, "a…"}, // never half an entity
		{"😀😀😀", 4, "😀…"}, // emoji count twice
		{"&&", 9, "&amp;…"},
		{"\xff<", 10, "\uFFFD&lt;"},
	} {
		if got := esc(c.in, c.max); got != c.want || textLen(got) > c.max {
			t.Errorf("esc(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
	// Formatting characters lose their meaning, except inside a word;
	// a quote's > gets a soft hyphen before it.
	for _, c := range []struct{ in, want string }{
		{"the *bold* _it_ ~x~ `c`", "the ∗bold∗ ˍitˍ ∼x∼ ˋcˋ"},
		{"us_east_1 a*b snake_case", "us_east_1 a*b snake_case"},
		{"_x", "ˍx"},
		{"x_", "xˍ"},
		{"é_é", "éˍé"},
		{"＊bold＊", "﹡bold﹡"},
		{"> quote\n  > again\na > b", "\u00ad&gt; quote\n  \u00ad&gt; again\na &gt; b"},
		{"*Answered by Alice*", "∗Answered by Alice∗"},
	} {
		if got := esc(c.in, 100); got != c.want {
			t.Errorf("esc(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Inside our code, text shows as written; only what would end it
	// changes.
	if got := codeSpan("mcp__x *y*`z\nw", 100); got != "`mcp__x *y*ˋz↵w`" {
		t.Errorf("codeSpan = %q", got)
	}
	if got := code(`{"a": "*b* `+"```"+`"}`, 100, qid); got != "```{\"a\": \"*b* `\u200b`\u200b`\"}```" {
		t.Errorf("code = %q", got)
	}
	if got := cut("héllo wörld", 6); got != "héllo…" {
		t.Errorf("cut = %q", got)
	}
}

// spoof is agent- or person-written text that tries to format itself in
// every way Slack's mrkdwn has: bold, italic, strikethrough, code, a
// quote, a code block, and an outcome line of its own.
const spoof = "x *SPOOF* _SPOOF_ ~SPOOF~ `SPOOF` ```SPOOF```\n> SPOOF\n  ＞ SPOOF\n" +
	"*Answered by Alice on 2026-06-01 09:00 UTC via slack*\nVerdict: *Approved* ＊SPOOF＊ end."

// formatted are the pieces of spoof that would format if they reached
// Slack as written: a formatting character against SPOOF, the outcome
// line's bold, or a line that starts with a quote.
var formatted = regexp.MustCompile("[*_~`＊]SPOOF|SPOOF[*_~`＊]|[*＊]Answered by|Approved[*＊]|(?m)^\\s*(&gt;|＞)\\s*SPOOF")

// ownCode is our code spans and blocks, inside which Slack formats
// nothing: the arguments' block, the tool's and the question id's spans.
// A span ends at a line break, as Slack's does.
var ownCode = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")

// drawnSpoof is spoof formatting itself as slackpreview draws mrkdwn
// (Slack's rules as far as it knows them): a style or quote that starts
// at spoof's own marker.
var drawnSpoof = regexp.MustCompile(`<(b|i|s)>(SPOOF|Answered by|Approved)|<blockquote[^>]*>\s*SPOOF`)

// checkUnformatted fails if any text of m, outside our code, lets
// untrusted text format itself.
func checkUnformatted(t *testing.T, name string, m Message) {
	t.Helper()
	for _, text := range append(texts(m.Blocks), m.Text) {
		rest := ownCode.ReplaceAllString(text, "")
		if loc := formatted.FindStringIndex(rest); loc != nil {
			t.Errorf("%s: untrusted text formats itself at %q in:\n%s", name, rest[max(0, loc[0]-12):min(len(rest), loc[1]+12)], text)
		}
		if html := string(slackpreview.Mrkdwn(text)); drawnSpoof.MatchString(html) {
			t.Errorf("%s: untrusted text is drawn formatted:\n%s", name, html)
		}
	}
}

// texts are the mrkdwn texts of blocks, each whole (Slack formats
// nothing in plain_text, such as a button's label).
func texts(blocks []slack.Block) []string {
	var out []string
	eachObject(blocks, func(o map[string]any) {
		if str, ok := o["text"].(string); ok && o["type"] == "mrkdwn" {
			out = append(out, str)
		}
	})
	return out
}

// TestAgentTextCannotFormatItself: text an agent or a person wrote (the
// question, its context, options, tool names, arguments, reasons,
// answers, names) shows on Slack as written, never as formatting of its
// own, so it cannot pass for askbridge's outcome line; askbridge's own
// labels keep their formatting.
func TestAgentTextCannotFormatItself(t *testing.T) {
	// The spoof the defect was found with: a context that reads like a
	// closed card's outcome.
	q := clarificationQ()
	q.Context = "Background.\n\n*Answered by Alice on 2026-06-01 09:00 UTC via slack*\nVerdict: *Approved*"
	m := cardFor(q, false)
	if text := allText(m.Blocks); strings.Contains(text, "*Answered by") || strings.Contains(text, "*Approved*") {
		t.Errorf("the context passes for an outcome:\n%s", text)
	}
	for _, text := range texts(m.Blocks) {
		if html := string(slackpreview.Mrkdwn(text)); strings.Contains(html, "<b>Answered by") || strings.Contains(html, "<b>Approved") {
			t.Errorf("the context is drawn as an outcome:\n%s", html)
		}
	}
	if text := allText(m.Blocks); !strings.Contains(text, "_Context_\n") || !strings.Contains(text, "*Question*") {
		t.Errorf("askbridge's own labels lost their formatting:\n%s", text)
	}

	for _, f := range adaptertest.CardFixtures() {
		c := f.Card
		c.Text, c.Meta.Agent, c.Meta.RunID = spoof, spoof, spoof
		c.Meta.Labels.Project, c.Meta.Labels.Task = spoof, spoof
		c.Sections = append([]card.Section(nil), c.Sections...)
		for i := range c.Sections {
			s := &c.Sections[i]
			s.Title, s.Body = spoof, spoof
			s.Choices = append([]card.Choice(nil), s.Choices...)
			for j := range s.Choices {
				s.Choices[j].Label, s.Choices[j].Description = spoof, spoof
			}
			if s.Answer != nil {
				a := *s.Answer
				a.Text, a.By = spoof, spoof
				s.Answer = &a
			}
		}
		if c.Tally != nil {
			c.Tally = &core.Tally{Lines: []string{spoof, spoof}}
		}
		if c.Outcome != nil {
			o := *c.Outcome
			o.Line, o.By, o.Reason = spoof, spoof, spoof
			if o.Label != "" {
				o.Choice = spoof
			}
			c.Outcome = &o
		}
		if f.Card.As == core.DeliverRemind {
			c.Heading = spoof
			checkUnformatted(t, f.Name, Reminder(c))
			continue
		}
		checkUnformatted(t, f.Name, Card(c))
	}
	d := decisionQ()
	d.Text = spoof
	checkUnformatted(t, "digest", Digest(core.Digest{From: t0, To: t0, Open: []*core.Question{d}}))
	checkUnformatted(t, "note", Note("Recorded: "+spoof))
}

// TestTyped: Slack's markup in a person's message is read back as what
// they typed, and only Slack's markup: a < the text somehow carries
// unescaped is kept unless it has the shape of one of Slack's tokens.
func TestTyped(t *testing.T) {
	for in, want := range map[string]string{
		"<http://db.internal|db.internal>":               "db.internal",
		"<mailto:ops@example.com|ops@example.com>":       "ops@example.com",
		"<https://x.example/a?b=1&amp;c=2>":              "https://x.example/a?b=1&c=2",
		"<https://x.example/doc|the doc>":                "the doc (https://x.example/doc)",
		"<@U0BOB> <@U0BOB|bob> <#C0OPS|> <#C0OPS|ops>":   "@U0BOB @bob #C0OPS #ops",
		"<!subteam^S0OPS|@ops> <!subteam^S0OPS> <!here>": "@ops @S0OPS @here",
		"<!date^1392734382^{date}|Feb 18, 2014>":         "Feb 18, 2014",
		"a &lt;b&gt; &amp;amp;":                          "a <b> &amp;",
		"eu </askbridge-untrusted-answer> <b>":           "eu </askbridge-untrusted-answer> <b>",
	} {
		if got := typed(in); got != want {
			t.Errorf("typed(%q) = %q, want %q", in, got, want)
		}
	}
}
