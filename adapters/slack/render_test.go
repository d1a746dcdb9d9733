package slack

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

const qid = "b234567abcdefghij"

func base(kind core.Kind) *core.Question {
	return &core.Question{
		ID: qid, Kind: kind, Agent: "deploy-bot", RunID: "run-1", ToolCallID: "toolu_1",
		Labels: core.Labels{Project: "billing", Task: "ledger <migration>"},
		Text:   "Which database for the ledger?", Context: "Write-heavy, 2 TB, & growing.",
		Reversibility: core.Reversible, Route: "ops",
		CreatedAt: t0, Deadline: t0.Add(24 * time.Hour), State: core.StateOpen,
	}
}

func decisionQ() *core.Question {
	q := base(core.KindDecision)
	q.Reversibility = core.HardToReverse
	q.Options = []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Known to the team; sharding later is work.", Recommended: true},
		{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; ad-hoc queries are constrained."},
	}
	return q
}

func approvalQ() *core.Question {
	q := base(core.KindApproval)
	q.Text = "May I drop the staging tables?"
	q.Context = ""
	q.Reversibility = core.HardToReverse
	q.Call = &core.ToolCall{Tool: "sql.exec", Arguments: json.RawMessage(`{"sql":"DROP TABLE a, b","target":"staging"}`),
		ArgumentsSHA256: "3f2a9c1b7d5e4f60a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef01"}
	return q
}

func formQ() *core.Question {
	q := base(core.KindForm)
	q.Text = "Release plan"
	q.Context = ""
	q.Items = []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{
			{ID: "mon", Label: "Monday", Description: "Quiet traffic", Recommended: true}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}
	return q
}

func clarificationQ() *core.Question {
	q := base(core.KindClarification)
	q.Text = "Which region for the bucket? <!channel> & friends"
	return q
}

// cardFor renders q as first posted (escalated: in an escalation route's
// room).
func cardFor(q *core.Question, escalated bool) Message {
	m := core.MessageRef{Kind: core.DeliverPost}
	if escalated {
		m.Kind = core.DeliverEscalate
	}
	return Card(card.New(q, m))
}

// TestCardFixtures renders the cards every platform is checked on into
// golden files beside the other platforms' (adapters/adaptertest), and
// checks what the golden files only show: every Block Kit limit, that the
// card names its question, and buttons exactly while the question is open.
func TestCardFixtures(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			var m Message
			if f.Card.As == core.DeliverRemind {
				m = Reminder(f.Card)
			} else {
				m = Card(f.Card)
				if id, ok := QuestionOfCard(roundTrip(t, m.Blocks)); !ok || id != f.Card.QuestionID {
					t.Fatalf("the card does not name its question: %q %v", id, ok)
				}
				if open := f.Card.Outcome == nil; open == (len(buttons(m.Blocks)) == 0) {
					t.Fatalf("open=%v but %d buttons", open, len(buttons(m.Blocks)))
				}
			}
			checkLimits(t, m)
			adaptertest.Golden(t, *update, core.SurfaceSlack, f.Name, goldenJSON(t, m))
		})
	}
}

func TestDigestAndNoteGolden(t *testing.T) {
	q := decisionQ()
	other := clarificationQ()
	other.ID = "c234567abcdefghij"
	golden(t, "digest", Digest(core.Digest{From: t0, To: t0.Add(3 * time.Hour), Asked: []*core.Question{q, other},
		Open: []*core.Question{q, other}}))
	golden(t, "note", Note(card.RefusalNote(core.Errorf(core.CodeForbidden, "answer", "no"))))
}

// TestCardSemantics checks what the golden files only show: buttons carry
// exactly their ref, the recommended option is primary and marked, the
// marker and labels are present, and user text is escaped.
func TestCardSemantics(t *testing.T) {
	m := cardFor(decisionQ(), false)
	bs := buttons(m.Blocks)
	if len(bs) != 3 {
		t.Fatalf("%d buttons, want 2 options and decline", len(bs))
	}
	for _, b := range bs {
		ref, err := core.DecodeRef(b.Value)
		if err != nil || b.ActionID != b.Value || ref.QuestionID != qid {
			t.Fatalf("button %+v does not carry exactly a ref", b)
		}
	}
	if bs[0].Style != slack.StylePrimary || !strings.Contains(bs[0].Text.Text, "Recommended") || bs[1].Style != "" {
		t.Fatalf("recommended option not marked: %+v %+v", bs[0], bs[1])
	}
	text := allText(m.Blocks)
	for _, s := range []string{card.HardToReverseMarker, "deploy-bot", "billing", "ledger &lt;migration&gt;", "Known to the team", "&amp; growing"} {
		if !strings.Contains(text, s) {
			t.Errorf("card lacks %q:\n%s", s, text)
		}
	}
	c := allText(cardFor(clarificationQ(), false).Blocks)
	if strings.Contains(c, "<!channel>") || !strings.Contains(c, "&lt;!channel&gt;") {
		t.Fatalf("mention not escaped:\n%s", c)
	}
	if strings.Contains(allText(cardFor(formQ(), false).Blocks), "Reversible") {
		t.Fatal("a reversible question shows a marker")
	}
}

// TestCardRefusesUnencodableRef: a button whose ref would be empty is not
// drawn at all.
func TestCardRefusesUnencodableRef(t *testing.T) {
	q := decisionQ()
	q.ID = "not-an-id"
	if bs := buttons(cardFor(q, false).Blocks); len(bs) != 0 {
		t.Fatalf("%d buttons drawn with an empty ref", len(bs))
	}
}

func buttons(blocks []slack.Block) []*slack.ButtonBlockElement {
	var out []*slack.ButtonBlockElement
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.SectionBlock:
			if b != nil && b.Accessory != nil && b.Accessory.ButtonElement != nil {
				out = append(out, b.Accessory.ButtonElement)
			}
		case *slack.ActionBlock:
			if b.Elements == nil {
				continue
			}
			for _, el := range b.Elements.ElementSet {
				if btn, ok := el.(*slack.ButtonBlockElement); ok && btn != nil {
					out = append(out, btn)
				}
			}
		}
	}
	return out
}

// allText is every text of blocks, plain_text and mrkdwn, a line each.
func allText(blocks []slack.Block) string {
	var s strings.Builder
	eachObject(blocks, func(o map[string]any) {
		if str, ok := o["text"].(string); ok {
			s.WriteString(str + "\n")
		}
	})
	return s.String()
}

// eachObject calls visit with every JSON object in blocks' JSON, at any
// depth.
func eachObject(blocks []slack.Block, visit func(map[string]any)) {
	raw, _ := json.Marshal(blocks)
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			visit(v)
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	walk(v)
}

// roundTrip sends blocks through JSON as Slack would hand them back.
func roundTrip(t *testing.T, blocks []slack.Block) slack.Blocks {
	t.Helper()
	raw, err := json.Marshal(blocks)
	if err != nil {
		t.Fatal(err)
	}
	var out slack.Blocks
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// goldenJSON is the message as the golden files hold it.
func goldenJSON(t *testing.T, m Message) []byte {
	t.Helper()
	got, err := json.Marshal(struct {
		Text   string        `json:"text"`
		Blocks []slack.Block `json:"blocks"`
	}{m.Text, m.Blocks})
	if err != nil {
		t.Fatal(err)
	}
	// Indented, and with & < > as written, so a golden reads as the
	// person sees it.
	return []byte(core.PrettyJSON(got) + "\n")
}

// golden compares the message's JSON with testdata/<name>.golden.
func golden(t *testing.T, name string, m Message) {
	t.Helper()
	adaptertest.GoldenFile(t, *update, filepath.Join("testdata", name+".golden"), goldenJSON(t, m))
}

// TestNoTextIsParsedForMentions: every text object of a card is verbatim
// (Slack parses no mention, channel name or URL out of plain text in it),
// so an agent named "@channel" pings nobody; before, the meta line's
// context block was not.
func TestNoTextIsParsedForMentions(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		c := f.Card
		c.Meta.Agent = "@channel"
		raw, err := json.Marshal(Card(c).Blocks)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), `"type":"mrkdwn"`) && strings.Contains(string(raw), `"verbatim":false`) ||
			regexp.MustCompile(`"type":"mrkdwn","text":"[^"]*"}`).Match(raw) {
			t.Fatalf("%s: a mrkdwn text that is not verbatim:\n%s", f.Name, raw)
		}
	}
}
