// Package teamspreview draws an Adaptive Card askbridge posted to Teams
// as an HTML page that looks like that card in a channel, so that a
// headless browser can take its picture for the README.
//
// It is a preview of Teams' rendering, written from the Adaptive Cards
// schema and Teams' look, not Teams itself: what Teams would show
// differently (its fonts, its theme, host config spacing) is not claimed.
// It draws the elements askbridge sends (TextBlock, RichTextBlock of
// TextRuns, Input.Text, ActionSet of Action.Execute) and refuses any
// other with an error, so a picture never silently leaves out part of a
// card.
package teamspreview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"
)

// Message is a card as a channel shows it.
type Message struct {
	Bot  string          // the poster's name above the card
	At   time.Time       // when it was posted; shown as a time of day, UTC
	Card json.RawMessage // the Adaptive Card as posted
}

type element struct {
	Type     string           `json:"type"`
	Text     string           `json:"text"`
	Inlines  []element        `json:"inlines"`
	Weight   string           `json:"weight"`
	Size     string           `json:"size"`
	Color    string           `json:"color"`
	IsSubtle bool             `json:"isSubtle"`
	FontType string           `json:"fontType"`
	Label    string           `json:"label"`
	Value    string           `json:"value"`
	Place    string           `json:"placeholder"`
	Multi    bool             `json:"isMultiline"`
	Actions  []map[string]any `json:"actions"`
}

// Page renders m as a complete HTML page. An element or action it does
// not know is an error.
func Page(m Message) (string, error) {
	var card struct {
		Type string    `json:"type"`
		Body []element `json:"body"`
	}
	if err := json.Unmarshal(m.Card, &card); err != nil || card.Type != "AdaptiveCard" {
		return "", fmt.Errorf("teamspreview: not an Adaptive Card: %v", err)
	}
	var b strings.Builder
	for _, e := range card.Body {
		if err := draw(&b, e); err != nil {
			return "", err
		}
	}
	var out bytes.Buffer
	err := page.Execute(&out, map[string]any{"Bot": m.Bot, "At": m.At.UTC().Format("15:04"), "Body": template.HTML(b.String())})
	return out.String(), err
}

func class(e element) string {
	var cs []string
	if e.Weight == "bolder" {
		cs = append(cs, "bold")
	}
	if e.IsSubtle {
		cs = append(cs, "subtle")
	}
	if e.Size != "" {
		cs = append(cs, "size-"+e.Size)
	}
	if e.Color != "" {
		cs = append(cs, "color-"+e.Color)
	}
	if e.FontType == "monospace" {
		cs = append(cs, "mono")
	}
	return strings.Join(cs, " ")
}

func draw(b *strings.Builder, e element) error {
	esc := template.HTMLEscapeString
	switch e.Type {
	case "TextBlock":
		// Server-made words; `code` spans are the one Markdown askbridge
		// writes in them.
		parts := strings.Split(esc(e.Text), "`")
		for i := 1; i < len(parts); i += 2 {
			parts[i] = "<code>" + parts[i] + "</code>"
		}
		fmt.Fprintf(b, `<div class="tb %s">%s</div>`, class(e), strings.Join(parts, ""))
	case "RichTextBlock":
		b.WriteString(`<div class="rtb">`)
		for _, r := range e.Inlines {
			if r.Type != "TextRun" {
				return fmt.Errorf("teamspreview: inline %q is not drawn", r.Type)
			}
			fmt.Fprintf(b, `<span class="%s">%s</span>`, class(r), esc(r.Text))
		}
		b.WriteString(`</div>`)
	case "Input.Text":
		fmt.Fprintf(b, `<label class="input"><span>%s</span>`, esc(e.Label))
		if e.Multi {
			fmt.Fprintf(b, `<textarea rows="3" placeholder="%s">%s</textarea></label>`, esc(e.Place), esc(e.Value))
		} else {
			fmt.Fprintf(b, `<input placeholder="%s" value="%s"></label>`, esc(e.Place), esc(e.Value))
		}
	case "ActionSet":
		b.WriteString(`<div class="actions">`)
		for _, a := range e.Actions {
			if a["type"] != "Action.Execute" {
				return fmt.Errorf("teamspreview: action %v is not drawn", a["type"])
			}
			title, _ := a["title"].(string)
			style, _ := a["style"].(string)
			fmt.Fprintf(b, `<button class="button" data-style="%s">%s</button>`, esc(style), esc(title))
		}
		b.WriteString(`</div>`)
	default:
		return fmt.Errorf("teamspreview: element %q is not drawn", e.Type)
	}
	return nil
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><style>
body { margin: 0; background: #f5f5f5; font: 14px/20px "Lato", "Segoe UI", sans-serif; color: #242424; }
.message { width: 688px; padding: 16px; }
.head { margin-bottom: 6px; }
.head .sender { font-weight: 700; margin-right: 8px; }
.head .time { color: #616161; font-size: 12px; }
.card { background: #fff; border-radius: 4px; box-shadow: 0 1px 2px rgba(0,0,0,.14); padding: 14px 16px; border-left: 4px solid #5b5fc7; }
.tb, .rtb { margin-top: 8px; white-space: pre-wrap; overflow-wrap: anywhere; }
.bold { font-weight: 700; }
.subtle { color: #616161; }
.size-small { font-size: 12px; }
.size-medium { font-size: 15px; }
.size-large { font-size: 18px; line-height: 24px; }
.color-attention { color: #c4314b; }
.color-accent { color: #5b5fc7; }
.mono { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 12px; background: #f0f0f0; padding: 0 3px; border-radius: 2px; }
.input { display: block; margin-top: 10px; font-size: 12px; color: #424242; }
.input input, .input textarea { display: block; width: 100%; box-sizing: border-box; margin-top: 2px; border: 1px solid #d1d1d1; border-radius: 4px; padding: 5px 8px; font: 12px "DejaVu Sans Mono", monospace; resize: none; }
.actions { margin-top: 10px; display: flex; flex-wrap: wrap; gap: 8px; }
.button { border: 1px solid #d1d1d1; background: #fff; border-radius: 4px; padding: 5px 12px; font: 600 14px "Lato", "Segoe UI", sans-serif; color: #242424; }
.button[data-style=positive] { background: #5b5fc7; border-color: #5b5fc7; color: #fff; }
.button[data-style=destructive] { color: #c4314b; border-color: #c4314b; }
</style></head><body>
<div class="message"><div class="head"><span class="sender">{{.Bot}}</span><span class="time">{{.At}}</span></div>
<div class="card">{{.Body}}</div></div>
</body></html>`))
