package slack

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/slack/slackpreview"
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

// TestCardWorstCaseFitsSlack fills every field to core's maximum, with
// characters that grow when escaped or count double, and checks every
// Block Kit limit and the message's total size.
func TestCardWorstCaseFitsSlack(t *testing.T) {
	long := func(n int) string { return repeatRunes("&<😀>é", n) }
	ids := func(i int) string { return strings.Repeat("x", core.MaxIDLen-3) + string(rune('a'+i)) + "zz" }
	var opts []core.Option
	for i := range core.MaxOptions {
		opts = append(opts, core.Option{ID: ids(i), Title: long(core.MaxTitleLen), Writeup: long(core.MaxWriteupLen), Recommended: i == 3})
	}
	var items []core.FormItem
	for i := range core.MaxItems {
		var fo []core.FormOption
		for j := range core.MaxItemOptions {
			fo = append(fo, core.FormOption{ID: ids(j), Label: long(core.MaxTitleLen), Description: long(core.MaxWriteupLen), Recommended: j == 0})
		}
		items = append(items, core.FormItem{ID: ids(i), Question: long(core.MaxTextLen), Options: fo})
	}
	args, _ := json.Marshal(map[string]string{"k": long(core.MaxArgumentsLen / 8)})
	mk := func(kind core.Kind) *core.Question {
		q := base(kind)
		q.Agent, q.Labels = core.AgentID(long(core.MaxIDLen)), core.Labels{Project: long(core.MaxIDLen), Task: long(core.MaxIDLen)}
		q.Text, q.Context, q.Reversibility = long(core.MaxTextLen), long(core.MaxContextLen), core.HardToReverse
		return q
	}
	dec, form, appr, clar := mk(core.KindDecision), mk(core.KindForm), mk(core.KindApproval), mk(core.KindClarification)
	dec.Options, form.Items = opts, items
	appr.Call = &core.ToolCall{Tool: long(core.MaxToolLen), Arguments: args, ArgumentsSHA256: strings.Repeat("a", 64)}
	big := core.Decider{Surface: core.SurfaceSlack, ID: "U1", Name: long(200)}
	halfForm := *form
	for i := range 3 {
		halfForm.Answers = append(halfForm.Answers, core.ItemAnswer{ItemID: items[i].ID, Text: long(core.MaxAnswerLen), Decider: big, At: t0})
	}
	closedClar := *clar
	closedClar.State = core.StateAnswered
	closedClar.Resolution = &core.Resolution{State: core.StateAnswered, Decider: big, At: t0, Answer: long(core.MaxAnswerLen), Reason: long(core.MaxReasonLen)}
	closedForm := *form
	closedForm.State = core.StateAnswered
	closedForm.Resolution = &core.Resolution{State: core.StateAnswered, Decider: big, At: t0}
	for i := range items {
		closedForm.Answers = append(closedForm.Answers, core.ItemAnswer{ItemID: items[i].ID, Text: long(core.MaxAnswerLen), Decider: big, At: t0})
	}
	cards := map[string]*core.Question{"decision": dec, "form": form, "form_half": &halfForm, "approval": appr,
		"clarification": clar, "closed_clarification": &closedClar, "closed_form": &closedForm}
	for name, q := range worstBatches(mk, long, big) {
		cards[name] = q
	}
	for name, q := range cards {
		t.Run(name, func(t *testing.T) {
			m := cardFor(q, true)
			checkLimits(t, m)
			if n := jsonLen(m.Blocks); n > maxBlocksJSON {
				t.Fatalf("blocks are %d characters of JSON; keep them under %d", n, maxBlocksJSON)
			}
			if q.IsBatch() && q.Open() {
				checkBatchButtons(t, q, m)
			}
		})
	}
	var many []*core.Question
	for range 40 {
		many = append(many, dec)
	}
	checkLimits(t, Digest(core.Digest{From: t0, To: t0.Add(time.Hour), Asked: many, Open: many}))
	checkLimits(t, Reminder(card.NewReminder(dec, core.SurfaceSlack, "C1")))
	checkLimits(t, Note(long(5000)))
}

// worstBatches are batches of core.MaxBatchCalls calls, each as large as
// core allows (tool name, arguments as asked and as edited, reasons and
// names), with every per-call button, open and closed: undecided, half
// decided in every way a call can be (edited, denied with a reason, by a
// standing approval, by a policy rule), all decided, denied as a whole,
// declined and timed out.
func worstBatches(mk func(core.Kind) *core.Question, long func(int) string, big core.Decider) map[string]*core.Question {
	// Arguments near core's limit whose shown text doubles as JSON (quotes
	// and backslashes) or grows when escaped, over many lines.
	kv := map[string]string{}
	for i := 0; ; i++ {
		kv[fmt.Sprintf("k%03d", i)] = repeatRunes(`"\&<😀>é`, 60)
		if raw, _ := json.Marshal(kv); len(raw) > core.MaxArgumentsLen-600 {
			delete(kv, fmt.Sprintf("k%03d", i))
			break
		}
	}
	args, _ := json.Marshal(kv)
	var changes []core.KeyChange
	for k := range kv {
		changes = append(changes, core.KeyChange{Key: k + long(40), Change: core.KeyChanged})
	}
	open := mk(core.KindApproval)
	open.Call = nil
	for i := range core.MaxBatchCalls {
		open.Calls = append(open.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i), ToolCall: core.ToolCall{
			Tool: long(core.MaxToolLen), Arguments: args, ArgumentsSHA256: strings.Repeat("a", 64),
			Editable: &core.Editable{All: true}, Standing: &core.StandingOffer{Hours: 8}}})
	}
	decide := func(i int) core.ItemAnswer {
		a := core.ItemAnswer{ItemID: open.Calls[i].ToolCallID, OptionID: core.ApproveOption, Decider: big, At: t0}
		switch i % 4 {
		case 0:
			a.Edit = &core.ArgumentEdit{Arguments: args, ArgumentsSHA256: strings.Repeat("b", 64),
				AskedArgumentsSHA256: strings.Repeat("a", 64), Changes: changes}
		case 1:
			a.OptionID, a.Text = core.DenyOption, long(core.MaxReasonLen)
		case 2:
			a.Standing = &core.StandingUse{ID: "st-1", GrantedBy: big, GrantedAt: t0}
		case 3:
			a.Policy = &core.RuleUse{Route: long(core.MaxIDLen), Index: 3, Name: long(core.MaxIDLen), Decide: core.DecideDeny}
			a.OptionID, a.Text = core.DenyOption, long(core.MaxReasonLen)
		}
		return a
	}
	closed := func(st core.State, closer core.Closer, decided int, reason string) *core.Question {
		q := *open
		q.Answers = nil
		for i := range decided {
			q.Answers = append(q.Answers, decide(i))
		}
		if st != core.StateOpen {
			q.State = st
			q.Resolution = &core.Resolution{State: st, ClosedBy: closer, Decider: big, At: t0, Reason: reason}
		}
		return &q
	}
	return map[string]*core.Question{
		"batch":                closed(core.StateOpen, "", 0, ""),
		"batch_half":           closed(core.StateOpen, "", core.MaxBatchCalls/2, ""),
		"batch_one_left":       closed(core.StateOpen, "", core.MaxBatchCalls-1, ""),
		"closed_batch":         closed(core.StateAnswered, core.CloserParts, core.MaxBatchCalls, ""),
		"closed_batch_denied":  closed(core.StateAnswered, core.CloserPerson, core.MaxBatchCalls, long(core.MaxReasonLen)),
		"closed_batch_decline": closed(core.StateDeclined, "", core.MaxBatchCalls/2, ""),
		"closed_batch_timeout": closed(core.StateTimedOut, "", core.MaxBatchCalls/2, core.TimeoutReason),
	}
}

// checkBatchButtons: an open batch's card keeps its own buttons (approve
// all, deny all, decline) whatever it leaves out, and says so when some
// undecided calls have no buttons of their own.
func checkBatchButtons(t *testing.T, q *core.Question, m Message) {
	t.Helper()
	own := map[core.RefAction]bool{}
	for _, b := range buttons(m.Blocks) {
		if r, err := core.DecodeRef(b.Value); err == nil && r.Item == -1 {
			own[r.Action] = true
		}
	}
	if !own[core.RefApprove] || !own[core.RefDeny] || !own[core.RefDecline] {
		t.Fatalf("the batch lost its own buttons: %v", own)
	}
	drawnCalls, said := 0, false
	for _, b := range m.Blocks {
		switch b := b.(type) {
		case *slack.ActionBlock:
			if strings.HasPrefix(b.BlockID, "call-") {
				drawnCalls++
			}
		case *slack.ContextBlock:
			said = said || b.BlockID == "calls-unbuttoned"
		}
	}
	if undecided := len(q.Calls) - len(q.Answers); drawnCalls < undecided != said {
		t.Fatalf("%d of %d undecided calls have buttons, and the card says so: %v", drawnCalls, undecided, said)
	}
}

func repeatRunes(unit string, n int) string {
	rs := []rune(unit)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[i%len(rs)]
	}
	return string(out)
}

// jsonLen is the size of the blocks' JSON as Slack counts it: without Go's
// HTML escaping, in UTF-16 units.
func jsonLen(blocks []slack.Block) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(blocks)
	// slack-go's block types marshal themselves with HTML escaping.
	return textLen(strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(buf.String()))
}

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
	if got := code(`{"a": "*b* `+"```"+`"}`, 100); got != "```{\"a\": \"*b* `\u200b`\u200b`\"}```" {
		t.Errorf("code = %q", got)
	}
	if got := cut("héllo wörld", 6); got != "héllo…" {
		t.Errorf("cut = %q", got)
	}
}

// checkLimits enforces Block Kit's documented limits on a rendered
// message.
func checkLimits(t *testing.T, m Message) {
	t.Helper()
	if len(m.Blocks) > maxBlocks {
		t.Fatalf("%d blocks", len(m.Blocks))
	}
	if textLen(m.Text) > maxFallback {
		t.Fatalf("fallback text is %d characters", textLen(m.Text))
	}
	ids := map[string]bool{}
	for _, b := range m.Blocks {
		raw, _ := json.Marshal(b)
		var v struct {
			BlockID string `json:"block_id"`
		}
		_ = json.Unmarshal(raw, &v)
		if v.BlockID == "" || len(v.BlockID) > maxActionID || ids[v.BlockID] {
			t.Fatalf("block_id %q empty, too long or repeated", v.BlockID)
		}
		ids[v.BlockID] = true
		switch b := b.(type) {
		case *slack.SectionBlock:
			if n := textLen(b.Text.Text); n > maxSectionText {
				t.Fatalf("section %s text is %d characters", b.BlockID, n)
			}
		case *slack.ContextBlock:
			for _, el := range b.ContextElements.Elements {
				if tx, ok := el.(*slack.TextBlockObject); ok && textLen(tx.Text) > maxSectionText {
					t.Fatalf("context %s is %d characters", b.BlockID, textLen(tx.Text))
				}
			}
		case *slack.ActionBlock:
			if n := len(b.Elements.ElementSet); n > 25 {
				t.Fatalf("actions %s has %d elements", b.BlockID, n)
			}
		}
	}
	actionIDs := map[string]bool{}
	for _, b := range buttons(m.Blocks) {
		if textLen(b.Text.Text) > maxButtonText || len(b.ActionID) > maxActionID || len(b.Value) > maxValue || actionIDs[b.ActionID] {
			t.Fatalf("button %+v breaks a limit or repeats an action_id", b)
		}
		actionIDs[b.ActionID] = true
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

func allText(blocks []slack.Block) string {
	raw, _ := json.Marshal(blocks)
	var s strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if str, ok := x.(string); ok && k == "text" {
					s.WriteString(str + "\n")
				} else {
					walk(x)
				}
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
	return s.String()
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
	raw, _ := json.Marshal(blocks)
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if str, ok := v["text"].(string); ok && v["type"] == "mrkdwn" {
				out = append(out, str)
			}
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
