package telegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"html"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// recorder captures the form tgbotapi would POST, without a network.
type recorder struct{ reqs []recorded }

type recorded struct {
	method string
	form   url.Values
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	form, _ := url.ParseQuery(string(body))
	r.reqs = append(r.reqs, recorded{method: req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:], form: form})
	res := `{"ok":true,"result":{"message_id":7,"chat":{"id":-1001,"type":"supergroup"},"date":0,"text":""}}`
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(res)), Header: http.Header{}}, nil
}

// wire returns exactly what tgbotapi sends for c, as a readable text:
// the method, then each form field (JSON fields indented).
func wire(t *testing.T, c tgbotapi.Chattable) string {
	t.Helper()
	rec := &recorder{}
	bot := &tgbotapi.BotAPI{Token: "TOKEN", Client: rec}
	bot.SetAPIEndpoint("http://telegram.invalid/bot%s/%s")
	if _, err := bot.Request(c); err != nil {
		t.Fatal(err)
	}
	r := rec.reqs[0]
	var b strings.Builder
	b.WriteString("POST " + r.method + "\n")
	keys := make([]string, 0, len(r.form))
	for k := range r.form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := r.form.Get(k)
		if strings.HasPrefix(v, "{") {
			var buf bytes.Buffer
			if json.Indent(&buf, []byte(v), "", "  ") == nil {
				v = buf.String()
			}
		}
		b.WriteString("\n== " + k + "\n" + v + "\n")
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	adaptertest.GoldenFile(t, *update, filepath.Join("testdata", name+".golden"), []byte(got))
}

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

const goldenID = "aqmh4k2x7pzr5tvnb"

func baseQuestion(kind core.Kind) *core.Question {
	return &core.Question{
		ID: goldenID, Kind: kind, Agent: "deploy-bot", RunID: "run-1",
		Labels:        core.Labels{Project: "billing", Task: "migrate <invoices> & co"},
		Text:          "Which region should the new bucket live in?",
		Context:       "The old bucket is in us-east-1; most users are in the EU.",
		Reversibility: core.Reversible, Route: "ops", State: core.StateOpen,
		CreatedAt: t0, Deadline: t0.Add(time.Hour),
	}
}

func decision() *core.Question {
	q := baseQuestion(core.KindDecision)
	q.Text = "Which database should the service use?"
	q.Reversibility = core.HardToReverse
	q.Options = []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Mature, transactional; one more server to run.", Recommended: true},
		{ID: "sqlite", Title: "SQLite", Writeup: "No server; single writer <b>only</b>."},
	}
	return q
}

func approval() *core.Question {
	q := baseQuestion(core.KindApproval)
	q.Text = "Run the migration on production?"
	q.Reversibility = core.HardToReverse
	q.Call = &core.ToolCall{Tool: "db.migrate", Arguments: json.RawMessage(`{"env":"prod","steps":["add_col","backfill"]}`), ArgumentsSHA256: "ab12"}
	return q
}

func form() *core.Question {
	q := baseQuestion(core.KindForm)
	q.Text = "A few choices for the release"
	q.Items = []core.FormItem{
		{ID: "channel", Question: "Release channel?", Options: []core.FormOption{
			{ID: "beta", Label: "Beta", Description: "Early adopters only", Recommended: true}, {ID: "stable", Label: "Stable"}}},
		{ID: "notes", Question: "Release notes tone?", Options: []core.FormOption{
			{ID: "short", Label: "Short"}, {ID: "full", Label: "Full"}}},
	}
	return q
}

func answered(q *core.Question, state core.State, res core.Resolution) *core.Question {
	q.State = state
	res.State = state
	res.At = t0.Add(12 * time.Minute)
	q.Resolution = &res
	return q
}

var alice = core.Decider{Surface: core.SurfaceTelegram, ID: "259760855", Name: "Alice <Ops>"}

// cardOf is q's card as first posted.
func cardOf(q *core.Question) card.Card {
	return card.New(q, core.MessageRef{Kind: core.DeliverPost})
}

// TestCardFixtures renders the cards every platform is checked on into
// golden files beside the other platforms' (adapters/adaptertest): a card
// as its edit, which is its post with the keyboard kept (an empty one
// once closed), and a reminder as its post.
func TestCardFixtures(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			chat, err := strconv.ParseInt(f.Room, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			var req tgbotapi.Chattable = RenderReminder(f.Card, chat)
			if f.Card.As != core.DeliverRemind {
				if req, err = RenderEdit(f.Card, chat, 4072); err != nil {
					t.Fatal(err)
				}
			}
			got := wire(t, req)
			checkWire(t, got)
			adaptertest.Golden(t, *update, core.SurfaceTelegram, f.Name, []byte(got))
		})
	}
}

func TestGoldenRequests(t *testing.T) {
	const chat = -1001234567890
	cases := []struct {
		name string
		req  func() (tgbotapi.Chattable, error)
	}{
		{"prompt_form_item", func() (tgbotapi.Chattable, error) {
			q := form()
			return RenderPrompt(cardOf(q), core.Ref{QuestionID: q.ID, Item: 1, Action: core.RefText}, chat, 4072,
				&tgbotapi.User{ID: 259760855, FirstName: "Alice", LastName: "<Ops>"})
		}},
		{"prompt_clarification", func() (tgbotapi.Chattable, error) {
			q := baseQuestion(core.KindClarification)
			return RenderPrompt(cardOf(q), core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}, chat, 4072, nil)
		}},
		{"digest", func() (tgbotapi.Chattable, error) {
			closed := answered(approval(), core.StateTimedOut, core.Resolution{Decider: core.System})
			return RenderDigest(core.Digest{From: t0, To: t0.Add(3 * time.Hour), Asked: []*core.Question{decision(), closed},
				Closed: []*core.Question{closed}, Open: []*core.Question{decision()}}, chat), nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := c.req()
			if err != nil {
				t.Fatal(err)
			}
			got := wire(t, req)
			golden(t, c.name, got)
			checkWire(t, got)
		})
	}
}

// checkWire checks what Telegram would check of a rendered request.
func checkWire(t *testing.T, w string) {
	t.Helper()
	text := fieldOf(w, "text")
	plain, err := telegramfake.PlainText(text)
	if err != nil {
		t.Fatalf("the HTML does not parse: %v\n%s", err, text)
	}
	if units(text) > MaxText || strings.TrimSpace(plain) == "" {
		t.Fatalf("text is %d units", units(text))
	}
	if mk := fieldOf(w, "reply_markup"); mk != "" {
		var k tgbotapi.InlineKeyboardMarkup
		_ = json.Unmarshal([]byte(mk), &k)
		for _, row := range k.InlineKeyboard {
			for _, b := range row {
				if b.CallbackData == nil || len(*b.CallbackData) < 1 || len(*b.CallbackData) > MaxCallbackData {
					t.Fatalf("button %q has bad callback_data", b.Text)
				}
				if _, err := core.DecodeRef(*b.CallbackData); err != nil {
					t.Fatalf("button %q carries %q, not a ref", b.Text, *b.CallbackData)
				}
			}
		}
	}
}

func fieldOf(w, key string) string {
	_, rest, ok := strings.Cut(w, "\n== "+key+"\n")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "\n== ")
	return strings.TrimSuffix(v, "\n")
}

func TestKeyboardByKind(t *testing.T) {
	labels := func(q *core.Question) []string {
		var out []string
		for _, r := range rows(t, q) {
			out = append(out, strings.Join(r, " | "))
		}
		return out
	}
	if got := labels(decision()); !slices.Equal(got, []string{"1. PostgreSQL" + card.RecommendedNote, "2. SQLite", card.LabelDecline}) {
		t.Errorf("decision rows %q", got)
	}
	if got := labels(approval()); !slices.Equal(got, []string{card.LabelApprove + " | " + card.LabelDeny, card.LabelDecline}) {
		t.Errorf("approval rows %q", got)
	}
	if got := labels(baseQuestion(core.KindClarification)); !slices.Equal(got, []string{card.LabelAnswer, card.LabelDecline}) {
		t.Errorf("clarification rows %q", got)
	}
	q := form()
	q.Answers = []core.ItemAnswer{{ItemID: "channel", OptionID: "beta"}}
	if got := labels(q); !slices.Equal(got, []string{"2. Short | 2. Full | 2. Something else", card.LabelDecline}) {
		t.Errorf("form rows after item 1 %q", got)
	}
	closed := answered(decision(), core.StateAnswered, core.Resolution{Decider: alice, OptionID: "pg"})
	if got := labels(closed); len(got) != 0 {
		t.Errorf("a closed card keeps buttons %q", got)
	}
}

func TestRefusesBadButtons(t *testing.T) {
	q := decision()
	q.ID = "not-an-id"
	if _, err := RenderCard(cardOf(q), 1); !errors.Is(err, ErrBadButton) {
		t.Fatalf("a card whose refs cannot be encoded rendered: %v", err)
	}
	if _, err := RenderEdit(cardOf(q), 1, 2); !errors.Is(err, ErrBadButton) {
		t.Fatalf("an edit whose refs cannot be encoded rendered: %v", err)
	}
	if _, err := button(card.Action{Label: "x", Ref: core.Ref{QuestionID: goldenID, Item: -1, Action: 'z'}}); !errors.Is(err, ErrBadButton) {
		t.Fatalf("a button with an unknown action rendered: %v", err)
	}
	if _, err := RenderPrompt(cardOf(decision()), core.Ref{QuestionID: goldenID, Item: -1, Action: core.RefOption}, 1, 2, nil); !errors.Is(err, ErrBadButton) {
		t.Fatalf("a prompt for an option ref rendered: %v", err)
	}
}

// TestLongTextsAreCutSafely: the longest texts core accepts, full of
// characters that need escaping and of astral runes, still give a card
// within 4096 units that parses, with its outcome and ref intact.
func TestLongTextsAreCutSafely(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a<&>'𝄞", n/6) } // n runes at most
	for _, kind := range []core.Kind{core.KindClarification, core.KindDecision, core.KindApproval, core.KindForm} {
		var q *core.Question
		switch kind {
		case core.KindClarification:
			q = baseQuestion(kind)
		case core.KindDecision:
			q = decision()
			for i := range q.Options {
				q.Options[i].Title, q.Options[i].Writeup = long(core.MaxTitleLen), long(core.MaxWriteupLen)
			}
		case core.KindApproval:
			q = approval()
			args, _ := json.Marshal(map[string]string{"sql": long(8000)})
			q.Call.Arguments = args
		case core.KindForm:
			q = form()
		}
		q.Text, q.Context = long(core.MaxTextLen), long(core.MaxContextLen)
		q.Agent, q.Labels.Project, q.Labels.Task = core.AgentID(long(core.MaxIDLen)), long(core.MaxIDLen), long(core.MaxIDLen)
		for _, closed := range []bool{false, true} {
			if closed {
				q = answered(q, core.StateAnswered, core.Resolution{Decider: core.Decider{Surface: core.SurfaceTelegram, ID: "1", Name: long(128)},
					Answer: long(core.MaxAnswerLen), Reason: long(core.MaxReasonLen), OptionID: "pg"})
			}
			e, err := RenderEdit(cardOf(q), 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if n := units(e.Text); n > MaxText {
				t.Fatalf("%s: %d units", kind, n)
			}
			plain, entities, err := telegramfake.Parse(e.Text)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if closed && !strings.Contains(plain, "Answered by") {
				t.Fatalf("%s: the outcome was cut off:\n%s", kind, plain)
			}
			if kind == core.KindClarification {
				if r, ok := PromptRef(plain, entities); !ok || r.QuestionID != q.ID {
					t.Fatalf("the clarification's ref line was cut off")
				}
			}
		}
	}
}

func TestEscCutsWithinBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"a<b", 10, "a&lt;b"},
		{"a<b", 5, "a…"}, // "&lt;" does not fit whole with the ellipsis
		{"𝄞𝄞𝄞", 4, "𝄞…"},
		{"abc", 0, ""},
		{"\xff", 5, "\uFFFD"},
	} {
		if got := esc(c.in, c.max); got != c.want {
			t.Errorf("esc(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
	if got := cutPlain(strings.Repeat("é", 300), MaxCallbackText); units(got) != MaxCallbackText || !strings.HasSuffix(got, ellipsis) {
		t.Errorf("cutPlain gave %d units", units(got))
	}
}

// TestNoLinkPreviews: every message askbridge sends on Telegram turns
// link previews off; before, a reminder, a digest and a reply prompt put
// a preview its owner chose under a link in an agent's text.
func TestNoLinkPreviews(t *testing.T) {
	c := adaptertest.CardFixtures()[0].Card
	post, _ := RenderCard(c, 1)
	edit, _ := RenderEdit(c, 1, 2)
	prompt, _ := RenderPrompt(c, core.Ref{QuestionID: c.QuestionID, Item: -1, Action: core.RefText}, 1, 2, nil)
	for name, off := range map[string]bool{
		"post": post.DisableWebPagePreview, "edit": edit.DisableWebPagePreview, "prompt": prompt.DisableWebPagePreview,
		"reminder": RenderReminder(c, 1).DisableWebPagePreview, "digest": RenderDigest(core.Digest{}, 1).DisableWebPagePreview,
	} {
		if !off {
			t.Errorf("%s: link previews on", name)
		}
	}
}

// TestTextMentionsNobody: an @name in someone's text is written so
// Telegram makes no mention of it (a mention notifies that person):
// Telegram (tdlib's match_mentions, mirrored by tdMentions) mentions an
// @name after anything but a letter, a number or '_', punctuation
// included. An @ after a word character mentions nobody, so an e-mail
// address stays as written.
func TestTextMentionsNobody(t *testing.T) {
	for in, want := range map[string]string{
		"@cto_alice urgent":           "＠cto_alice urgent",
		"ping (@ops_team) now":        "ping (＠ops_team) now",
		"cc.@cto_alice":               "cc.＠cto_alice",
		"thanks.@ops_oncall":          "thanks.＠ops_oncall",
		"a,@ops b-@ops c/@ops d:@ops": "a,＠ops b-＠ops c/＠ops d:＠ops",
		"mail ops@example.com today":  "mail ops@example.com today",
		"first.last@example.com":      "first.last@example.com",
		"ops_2@example.com":           "ops_2@example.com",
		"renée@example.fr":            "renée@example.fr",
		"x²@ops_team":                 "x²@ops_team", // '²' is a number to Telegram: no mention
	} {
		if got := esc(in, 100); got != want {
			t.Errorf("esc(%q) = %q, want %q", in, got, want)
		}
	}
	// Whatever comes before it, an @name that Telegram would make a
	// mention of is not one once escaped.
	before := []rune("!\"#$%&'()*+,-./:;<=>?[\\]^`{|}~ \t\n«»“”‘’…—–·•¡¿\u00a0\u200b\u3000、。")
	for _, p := range before {
		in := "x" + string(p) + "@cto_alice"
		if len(tdMentions(in)) == 0 {
			t.Fatalf("%q: no mention to Telegram; the test's list is wrong", in)
		}
		shown := html.UnescapeString(esc(in, 100))
		if got := tdMentions(shown); len(got) > 0 {
			t.Errorf("after %q: %q mentions %v", p, shown, got)
		}
	}
}
