// Package slackpreview draws a Slack message from the Block Kit blocks
// askbridge posted, as an HTML page that looks like that message in a
// channel, so that a headless browser can take its picture for the README.
//
// It is a preview of Slack's rendering, written from Block Kit's and
// mrkdwn's published rules and Slack's look, not Slack itself: what Slack
// would show differently (its fonts, emoji, link unfurls) is not claimed.
// It draws the blocks and elements askbridge sends (section with text,
// fields and a button or image beside, context, divider, header, actions
// of buttons) and refuses any other with an error, so a picture never
// silently leaves out part of a message.
package slackpreview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Message is a message as a channel shows it.
type Message struct {
	Bot    string          // the poster's name above the message
	At     time.Time       // when it was posted; shown as a time of day, UTC
	Blocks json.RawMessage // the blocks as posted (chat.postMessage's blocks)
}

// Page is a whole HTML page with the message on it, 720 px wide, in the
// element .message.
func Page(m Message) (string, error) {
	blocks, err := Blocks(m.Blocks)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = page.Execute(&b, struct {
		Bot, Initial, Time string
		Blocks             template.HTML
	}{m.Bot, initial(m.Bot), m.At.UTC().Format("3:04 PM"), blocks})
	return b.String(), err
}

// Blocks draws the blocks of a message, in order.
func Blocks(raw json.RawMessage) (template.HTML, error) {
	var bs slack.Blocks
	if err := json.Unmarshal(raw, &bs); err != nil {
		return "", fmt.Errorf("blocks: %w", err)
	}
	var b strings.Builder
	for i, blk := range bs.BlockSet {
		if err := block(&b, blk); err != nil {
			return "", fmt.Errorf("block %d: %w", i, err)
		}
	}
	return template.HTML(b.String()), nil
}

// block draws one block, or refuses a kind it does not draw.
func block(b *strings.Builder, blk slack.Block) error {
	switch v := blk.(type) {
	case *slack.SectionBlock:
		return section(b, v)
	case *slack.ContextBlock:
		return contextLine(b, v)
	case *slack.DividerBlock:
		b.WriteString(`<hr class="block divider">`)
	case *slack.HeaderBlock:
		if v.Text == nil {
			return fmt.Errorf("a header without text")
		}
		t, err := text(v.Text)
		if err != nil {
			return err
		}
		b.WriteString(`<div class="block header">` + t + `</div>`)
	case *slack.ActionBlock:
		return actions(b, v)
	default:
		return fmt.Errorf("a %s block is not drawn", blk.BlockType())
	}
	return nil
}

// section draws a section: its text, its fields and what is beside them.
func section(b *strings.Builder, v *slack.SectionBlock) error {
	b.WriteString(`<div class="block section"><div class="section-main">`)
	if v.Text != nil {
		t, err := text(v.Text)
		if err != nil {
			return err
		}
		b.WriteString(`<div class="text">` + t + `</div>`)
	}
	if len(v.Fields) > 0 {
		b.WriteString(`<div class="fields">`)
		for _, f := range v.Fields {
			t, err := text(f)
			if err != nil {
				return err
			}
			b.WriteString(`<div class="text field">` + t + `</div>`)
		}
		b.WriteString(`</div>`)
	}
	b.WriteString(`</div>`)
	if a := v.Accessory; a != nil {
		switch {
		case a.ButtonElement != nil:
			btn, err := button(a.ButtonElement)
			if err != nil {
				return err
			}
			b.WriteString(`<div class="accessory">` + btn + `</div>`)
		case a.ImageElement != nil:
			b.WriteString(`<div class="accessory">` + image(a.ImageElement, "accessory-image") + `</div>`)
		default:
			return fmt.Errorf("a section's accessory other than a button or an image is not drawn")
		}
	}
	b.WriteString(`</div>`)
	return nil
}

// contextLine draws a context block's texts and images, in a line.
func contextLine(b *strings.Builder, v *slack.ContextBlock) error {
	b.WriteString(`<div class="block context">`)
	for _, e := range v.ContextElements.Elements {
		switch e := e.(type) {
		case *slack.TextBlockObject:
			t, err := text(e)
			if err != nil {
				return err
			}
			b.WriteString(`<span class="text">` + t + `</span>`)
		case *slack.ImageBlockElement:
			b.WriteString(image(e, "context-image"))
		default:
			return fmt.Errorf("a context element %T is not drawn", e)
		}
	}
	b.WriteString(`</div>`)
	return nil
}

// actions draws an actions block's buttons, the only elements askbridge
// puts there.
func actions(b *strings.Builder, v *slack.ActionBlock) error {
	b.WriteString(`<div class="block actions">`)
	if v.Elements != nil {
		for _, e := range v.Elements.ElementSet {
			btn, ok := e.(*slack.ButtonBlockElement)
			if !ok {
				return fmt.Errorf("an actions element %T is not drawn", e)
			}
			h, err := button(btn)
			if err != nil {
				return err
			}
			b.WriteString(h)
		}
	}
	b.WriteString(`</div>`)
	return nil
}

// text draws a text object: mrkdwn as Slack formats it, plain_text as it is.
func text(t *slack.TextBlockObject) (string, error) {
	switch t.Type {
	case slack.MarkdownType:
		return string(Mrkdwn(t.Text)), nil
	case slack.PlainTextType:
		return template.HTMLEscapeString(t.Text), nil
	}
	return "", fmt.Errorf("a text object of type %q", t.Type)
}

// button draws a button with its style (primary is green, danger red,
// none the plain outlined button).
func button(e *slack.ButtonBlockElement) (string, error) {
	if e.Text == nil || e.Text.Type != slack.PlainTextType {
		return "", fmt.Errorf("a button's text must be plain_text")
	}
	style := string(e.Style)
	if style == "" {
		style = "default"
	}
	return `<button type="button" class="button" data-style="` + template.HTMLEscapeString(style) + `">` +
		template.HTMLEscapeString(e.Text.Text) + `</button>`, nil
}

// image draws an image element as a placeholder box with its alt text:
// the preview fetches nothing.
func image(e *slack.ImageBlockElement, class string) string {
	return `<span class="` + class + `" role="img" aria-label="` + template.HTMLEscapeString(e.AltText) + `"></span>`
}

// initial is the avatar's letter: the name's first, as a capital.
func initial(name string) string {
	r := []rune(strings.TrimSpace(name))
	return strings.ToUpper(string(r[:min(1, len(r))]))
}

// page is the message in a channel. Its sizes, colours and fonts are
// those of Slack's light theme; Lato is Slack's face, and the stack falls
// back to the system's sans-serif where it is not installed.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Slack message preview</title>
<style>
html, body { margin: 0; background: #fff; }
body { width: 720px; font: 15px/1.46668 Lato, "Helvetica Neue", Helvetica, "Segoe UI", Arial, sans-serif; color: #1d1c1d;
  -webkit-font-smoothing: antialiased; }
.message { display: flex; gap: 8px; padding: 14px 20px 16px; box-sizing: border-box; width: 720px; }
.avatar { flex: none; width: 36px; height: 36px; border-radius: 6px; background: #1f6f78; color: #fff;
  font-weight: 900; font-size: 19px; display: flex; align-items: center; justify-content: center; margin-top: 3px; }
.content { flex: 1; min-width: 0; }
.head { display: flex; align-items: baseline; gap: 6px; line-height: 22px; }
.sender { font-weight: 900; }
.badge { font-size: 10px; font-weight: 700; color: #616061; background: rgba(29,28,29,.06); border-radius: 2px;
  padding: 1px 3px; letter-spacing: .2px; position: relative; top: -1px; }
.time { font-size: 12px; color: #616061; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.block { margin: 4px 0 0; }
.section { display: flex; gap: 12px; align-items: flex-start; }
.section-main { flex: 1; min-width: 0; }
.fields { display: grid; grid-template-columns: 1fr 1fr; gap: 8px 16px; margin-top: 4px; }
.context { font-size: 13px; line-height: 18px; color: #616061; display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-top: 4px; }
.context b { color: #616061; }
.header { font-size: 18px; font-weight: 900; line-height: 1.33; margin: 6px 0 2px; }
.divider { border: 0; border-top: 1px solid rgba(29,28,29,.13); margin: 10px 0 8px; }
.code { font: 12px/1.5 Monaco, Menlo, Consolas, "Courier New", "DejaVu Sans Mono", monospace; color: #e01e5a;
  background: rgba(29,28,29,.04); border: 1px solid rgba(29,28,29,.13); border-radius: 3px; padding: 2px 3px 1px; }
.context .code { font-size: 11px; }
.pre { font: 12px/1.5 Monaco, Menlo, Consolas, "Courier New", "DejaVu Sans Mono", monospace; white-space: pre-wrap;
  background: rgba(29,28,29,.04); border: 1px solid rgba(29,28,29,.13); border-radius: 4px; padding: 8px; margin: 4px 0; }
.quote { border-left: 4px solid #ddd; padding-left: 16px; margin: 4px 0; }
.link { color: #1264a3; text-decoration: none; }
.mention { color: #1264a3; background: rgba(29,155,209,.1); border-radius: 3px; padding: 0 2px; }
b { font-weight: 700; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 8px; }
.actions + .actions { margin-top: 8px; }
.button { font: 700 13px/1 Lato, "Helvetica Neue", Helvetica, Arial, sans-serif; height: 28px; padding: 0 12px; border-radius: 4px;
  border: 1px solid rgba(29,28,29,.3); background: #fff; color: #1d1c1d; cursor: pointer; }
.button[data-style="primary"] { background: #007a5a; border-color: #007a5a; color: #fff; }
.button[data-style="danger"] { background: #e01e5a; border-color: #e01e5a; color: #fff; }
.accessory-image { display: inline-block; width: 88px; height: 88px; border-radius: 4px; background: #e8e8e8; }
.context-image { display: inline-block; width: 20px; height: 20px; border-radius: 4px; background: #e8e8e8; }
</style></head>
<body>
<div class="message">
  <div class="avatar" aria-hidden="true">{{.Initial}}</div>
  <div class="content">
    <div class="head"><span class="sender">{{.Bot}}</span><span class="badge">APP</span><span class="time">{{.Time}}</span></div>
    <div class="blocks">{{.Blocks}}</div>
  </div>
</div>
</body></html>
`))
