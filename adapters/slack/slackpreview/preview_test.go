package slackpreview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func TestMrkdwn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"*bold* and _italic_ and ~gone~", "<b>bold</b> and <i>italic</i> and <s>gone</s>"},
		{"*_both_*", "<b><i>both</i></b>"},
		{"*Tool:* `Bash`", `<b>Tool:</b> <code class="code">Bash</code>`},
		// Markers inside a word, around spaces, or across lines are text.
		{"node_modules and snake_case_name", "node_modules and snake_case_name"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"*open\nclose*", "*open\nclose*"},
		{"*unclosed", "*unclosed"},
		{"a*b*c", "a*b*c"},
		{"**", "**"},
		// Inside code nothing is formatted.
		{"`*not bold*`", `<code class="code">*not bold*</code>`},
		{"before\n```{\n  \"a\": \"*b*\"\n}```\nafter", `before<pre class="pre">{
  &#34;a&#34;: &#34;*b*&#34;
}</pre>after`},
		{"```unclosed", "```unclosed"},
		// Slack's entities are text; raw < > are references, or text.
		{"&lt;script&gt; &amp; <script>", "&lt;script&gt; &amp; &lt;script&gt;"},
		{"<https://example.com/a?b=1&amp;c=2|the *docs*>", `<a class="link" href="https://example.com/a?b=1&amp;c=2">the *docs*</a>`},
		{"<https://example.com>", `<a class="link" href="https://example.com">https://example.com</a>`},
		{"<javascript:alert(1)|x>", "&lt;javascript:alert(1)|x&gt;"},
		{"<@U0ALICE01> <#C0ASK|ops> <!here> <!subteam^S0DEPLOY|deploy>", `<span class="mention">@U0ALICE01</span> <span class="mention">#ops</span> <span class="mention">@here</span> <span class="mention">@deploy</span>`},
		{"<!date^1392734382^{date}|Feb 18th>", "Feb 18th"},
		// Quotes: a raw > at a line's start; an escaped one is text.
		{"> quoted *line*\n> two\nafter", `<blockquote class="quote">quoted <b>line</b>` + "\n" + `two</blockquote>after`},
		{"&gt; not a quote", "&gt; not a quote"},
		{"line one\nline two", "line one\nline two"},
	} {
		if got := string(Mrkdwn(c.in)); got != c.want {
			t.Errorf("Mrkdwn(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestBlocks(t *testing.T) {
	btn := func(label, value string, style slack.Style) *slack.ButtonBlockElement {
		b := slack.NewButtonBlockElement(value, value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
		b.Style = style
		return b
	}
	mk := func(t *testing.T, bs ...slack.Block) json.RawMessage {
		t.Helper()
		raw, err := json.Marshal(slack.Blocks{BlockSet: bs})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	raw := mk(t,
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "Deploy <prod>", false, false)),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Ship it?*", false, false),
			[]*slack.TextBlockObject{slack.NewTextBlockObject(slack.MarkdownType, "_left_", false, false), slack.NewTextBlockObject(slack.PlainTextType, "right", false, false)},
			slack.NewAccessory(btn("Pick", "p", ""))),
		slack.NewDividerBlock(),
		slack.NewContextBlock("c", slack.NewTextBlockObject(slack.MarkdownType, "by *agent-a*", false, false)),
		slack.NewActionBlock("a", btn("Approve", "1", slack.StylePrimary), btn("Deny", "2", slack.StyleDanger), btn("Later", "3", "")),
	)
	got, err := Blocks(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<div class="block header">Deploy &lt;prod&gt;</div>`,
		`<div class="text"><b>Ship it?</b></div>`,
		`<div class="text field"><i>left</i></div><div class="text field">right</div>`,
		`<div class="accessory"><button type="button" class="button" data-style="default">Pick</button></div>`,
		`<hr class="block divider">`,
		`<div class="block context"><span class="text">by <b>agent-a</b></span></div>`,
		`<button type="button" class="button" data-style="primary">Approve</button><button type="button" class="button" data-style="danger">Deny</button><button type="button" class="button" data-style="default">Later</button>`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	// The order of the blocks is kept.
	if h, a := strings.Index(string(got), "header"), strings.Index(string(got), "actions"); h < 0 || a < h {
		t.Errorf("blocks out of order:\n%s", got)
	}

	page, err := Page(Message{Bot: "askbridge", At: time.Date(2026, 12, 2, 14, 5, 0, 0, time.UTC), Blocks: raw})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="sender">askbridge</span>`, `<span class="time">2:05 PM</span>`, `<div class="avatar" aria-hidden="true">A</div>`, string(got)} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
}

// TestBlocksRefusesWhatItCannotDraw: a block or element the preview does
// not draw is an error, never left out of the picture.
func TestBlocksRefusesWhatItCannotDraw(t *testing.T) {
	for name, raw := range map[string]string{
		"rich_text":         `[{"type":"rich_text","elements":[]}]`,
		"select in actions": `[{"type":"actions","elements":[{"type":"static_select","action_id":"s","options":[]}]}]`,
		"overflow beside":   `[{"type":"section","text":{"type":"mrkdwn","text":"x"},"accessory":{"type":"overflow","action_id":"o","options":[]}}]`,
		"not json":          `{`,
	} {
		if got, err := Blocks(json.RawMessage(raw)); err == nil {
			t.Errorf("%s: drawn as %s", name, got)
		}
	}
}
