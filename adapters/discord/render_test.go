package discord

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/bwmarrin/discordgo"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var (
	asked    = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	answered = asked.Add(7 * time.Minute)
)

// golden compares v's JSON, as discordgo sends it, with testdata/name.golden.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	adaptertest.GoldenFile(t, *update, filepath.Join("testdata", name+".golden"), goldenJSON(t, v))
}

// goldenJSON is v's JSON as discordgo sends it, indented.
func goldenJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := discordgo.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(raw) {
		t.Fatalf("not JSON: %s", raw)
	}
	// Indented, and with & < > as written, so a golden reads as the
	// person sees it.
	return []byte(core.PrettyJSON(raw) + "\n")
}

// The questions every renderer is checked on. Ids are fixed so the
// golden files are stable.
func baseQ(id core.QuestionID, kind core.Kind) *core.Question {
	return &core.Question{
		ID: id, Kind: kind, Agent: "deploy-bot", RunID: "run-1", Route: "ops",
		Labels:        core.Labels{Project: "billing", Task: "ledger"},
		Reversibility: core.Reversible, CreatedAt: asked, Deadline: asked.Add(24 * time.Hour), State: core.StateOpen,
	}
}

func clarificationQ() *core.Question {
	q := baseQ("aaaaaaaaaaaaaaaaa", core.KindClarification)
	q.Text, q.Context = "Which region for the bucket?", "The app servers run in eu-west-1; the *old* bucket was us_east_1."
	return q
}

func decisionQ() *core.Question {
	q := baseQ("baaaaaaaaaaaaaaaa", core.KindDecision)
	q.Reversibility = core.HardToReverse
	q.Text, q.Context = "Which database for the ledger?", "Write-heavy, 2 TB, growing 10% a month."
	q.Options = []core.Option{
		{ID: "pg", Title: "PostgreSQL", Writeup: "Known to the team; sharding later is work.", Recommended: true},
		{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; queries are constrained."},
	}
	return q
}

func approvalQ() *core.Question {
	q := baseQ("caaaaaaaaaaaaaaaa", core.KindApproval)
	q.Reversibility = core.HardToReverse
	q.Text = "Drop the staging table?"
	q.Call = &core.ToolCall{Tool: "sql.exec", Arguments: json.RawMessage(`{"sql":"DROP TABLE staging"}`), ArgumentsSHA256: "00"}
	return q
}

func formQ() *core.Question {
	q := baseQ("daaaaaaaaaaaaaaaa", core.KindForm)
	q.Text = "Release plan"
	q.Items = []core.FormItem{
		{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday", Description: "quiet traffic", Recommended: true}, {ID: "fri", Label: "Friday"}}},
		{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
	}
	return q
}

var alicePublic = core.Decider{Surface: core.SurfaceDiscord, ID: "111111111111111111", Name: "Alice"}

func closeAs(q *core.Question, st core.State, d core.Decider, set func(*core.Resolution)) *core.Question {
	q.State = st
	q.Resolution = &core.Resolution{State: st, Decider: d, At: answered}
	if set != nil {
		set(q.Resolution)
	}
	return q
}

// post is q's card as first posted (escalated: in an escalation route's
// room); edit is its edit of card as recorded.
func post(q *core.Question, escalated bool) *discordgo.MessageSend {
	m := core.MessageRef{Kind: core.DeliverPost}
	if escalated {
		m.Kind = core.DeliverEscalate
	}
	return RenderPost(card.New(q, m))
}

func edit(q *core.Question, ref core.MessageRef) *discordgo.MessageEdit {
	return RenderEdit(card.New(q, ref), ref)
}

// TestCardFixtures renders the cards every platform is checked on into
// golden files beside the other platforms' (adapters/adaptertest): a card
// as its edit (which sets content and components both, and removes every
// button once closed), a reminder as its post.
func TestCardFixtures(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		t.Run(f.Name, func(t *testing.T) {
			var v any
			if f.Card.As == core.DeliverRemind {
				r := RenderReminder(f.Card)
				checkLimits(t, f.Card.QuestionID, r.Content, r.Components)
				v = r
			} else {
				e := RenderEdit(f.Card, core.MessageRef{Room: f.Room, ID: "844397162624450620"})
				if e.Components == nil || e.Content == nil || (f.Card.Outcome != nil) != (len(*e.Components) == 0) {
					t.Fatal("an edit must set content and components, and a closed card's has no buttons")
				}
				checkLimits(t, f.Card.QuestionID, *e.Content, *e.Components)
				v = e
			}
			adaptertest.Golden(t, *update, core.SurfaceDiscord, f.Name, goldenJSON(t, v))
		})
	}
}

func TestGoldenResponses(t *testing.T) {
	modal := func(q *core.Question, r core.Ref) *discordgo.InteractionResponse {
		m, ok := RenderModal(card.New(q, core.MessageRef{}), r)
		if !ok {
			t.Fatalf("no modal for %+v", r)
		}
		return m
	}
	c, a, f := clarificationQ(), approvalQ(), formQ()
	closed := closeAs(decisionQ(), core.StateAnswered, alicePublic, func(r *core.Resolution) { r.OptionID = "pg" })
	for name, v := range map[string]any{
		"modal_clarification": modal(c, core.Ref{QuestionID: c.ID, Item: -1, Action: core.RefText}),
		"modal_deny":          modal(a, core.Ref{QuestionID: a.ID, Item: -1, Action: core.RefDeny}),
		"modal_form_item":     modal(f, core.Ref{QuestionID: f.ID, Item: 1, Action: core.RefText}),
		"response_update":     RenderUpdate(card.New(closed, core.MessageRef{})),
		"response_note":       RenderNote(card.RefusalNote(&core.ClosedError{Question: closed})),
		"digest": RenderDigest(core.Digest{From: asked, To: asked.Add(3 * time.Hour),
			Asked: []*core.Question{decisionQ(), clarificationQ()}, Open: []*core.Question{decisionQ(), clarificationQ()},
			Closed: []*core.Question{closed}}),
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, v) })
	}
	// Refs that take no text open no modal.
	for _, tc := range []struct {
		q *core.Question
		r core.Ref
	}{
		{c, core.Ref{QuestionID: c.ID, Item: -1, Action: core.RefOption}},
		{a, core.Ref{QuestionID: a.ID, Item: -1, Action: core.RefApprove}},
		{f, core.Ref{QuestionID: f.ID, Item: 5, Action: core.RefText}},
		{c, core.Ref{QuestionID: c.ID, Item: -1, Action: core.RefDeny}},
		{a, core.Ref{QuestionID: a.ID, Item: -1, Action: core.RefText}},
	} {
		if _, ok := RenderModal(card.New(tc.q, core.MessageRef{}), tc.r); ok {
			t.Fatalf("modal for %+v on a %s", tc.r, tc.q.Kind)
		}
	}
}

// checkLimits fails if the message breaks a Discord limit or carries a
// button whose custom_id is not a ref to question id.
func checkLimits(t *testing.T, id core.QuestionID, content string, comps []discordgo.MessageComponent) {
	t.Helper()
	if n := width(content); n > maxContent {
		t.Fatalf("content is %d wide", n)
	}
	if len(comps) > maxRows {
		t.Fatalf("%d rows", len(comps))
	}
	for _, c := range comps {
		row, ok := c.(discordgo.ActionsRow)
		if !ok || len(row.Components) == 0 || len(row.Components) > maxButtonsPerRow {
			t.Fatalf("bad row %#v", c)
		}
		for _, b := range row.Components {
			btn := b.(discordgo.Button)
			r, err := core.DecodeRef(btn.CustomID)
			if err != nil || r.QuestionID != id || len(btn.CustomID) > maxCustomID {
				t.Fatalf("button %q carries %q", btn.Label, btn.CustomID)
			}
			if btn.Label == "" || width(btn.Label) > maxLabel {
				t.Fatalf("label %q", btn.Label)
			}
		}
	}
}

// TestLimitsWithHugeInputs: every field at core's maximum, full of
// markdown, emoji and mentions, still renders within Discord's limits.
func TestLimitsWithHugeInputs(t *testing.T) {
	long := func(n int) string {
		pattern := []rune("@everyone **bold** `tick` 🚀 <@123> _u_ ~s~ ||x|| # h\n- l\n> q [l](http://x) ")
		out := make([]rune, n)
		for i := range out {
			out[i] = pattern[i%len(pattern)]
		}
		return string(out)
	}
	q := decisionQ()
	q.Agent, q.Labels = core.AgentID(strings.Repeat("a", core.MaxIDLen)), core.Labels{Project: strings.Repeat("_", core.MaxIDLen), Task: strings.Repeat("🚀", core.MaxIDLen)}
	q.Text, q.Context = long(core.MaxTextLen), long(core.MaxContextLen)
	q.Options = nil
	for i := range core.MaxOptions {
		q.Options = append(q.Options, core.Option{ID: fmt.Sprint(i), Title: long(core.MaxTitleLen), Writeup: long(core.MaxWriteupLen), Recommended: i == 3})
	}
	m := post(q, true)
	checkLimits(t, q.ID, m.Content, m.Components)
	if n := len(m.Components); n != 3 { // 10 options in two rows, then Skip
		t.Fatalf("%d rows", n)
	}
	for i := range core.MaxOptions {
		if !strings.Contains(m.Content, fmt.Sprintf("**%d. ", i+1)) {
			t.Fatalf("option %d was crowded out of the card", i+1)
		}
	}

	f := formQ()
	f.Text, f.Context = long(core.MaxTextLen), long(core.MaxContextLen)
	f.Items = nil
	for i := range core.MaxItems {
		it := core.FormItem{ID: fmt.Sprint(i), Question: long(core.MaxTextLen)}
		for j := range core.MaxItemOptions {
			it.Options = append(it.Options, core.FormOption{ID: fmt.Sprint(j), Label: long(core.MaxTitleLen), Description: long(500), Recommended: j == 0})
		}
		f.Items = append(f.Items, it)
	}
	m = post(f, false)
	checkLimits(t, f.ID, m.Content, m.Components)
	if len(m.Components) != maxRows {
		t.Fatalf("a full form has %d rows, want one per item and Skip", len(m.Components))
	}
	for _, r := range m.Components {
		if n := len(r.(discordgo.ActionsRow).Components); n != 5 && n != 1 {
			t.Fatalf("a form row holds %d buttons", n)
		}
	}

	a := approvalQ()
	a.Text = long(core.MaxTextLen)
	a.Call.Arguments = json.RawMessage(`{"sql":"` + strings.Repeat("```", 5000) + `"}`)
	m = post(a, false)
	checkLimits(t, a.ID, m.Content, m.Components)
	if strings.Count(m.Content, "```") != 2 {
		t.Fatalf("the arguments' fences leaked out of the code block:\n%s", m.Content)
	}

	closed := closeAs(decisionQ(), core.StateAnswered, core.Decider{Surface: core.SurfaceDiscord, ID: "1", Name: long(200)}, func(r *core.Resolution) {
		r.OptionID, r.Reason = "pg", long(core.MaxReasonLen)
	})
	closed.Text = long(core.MaxTextLen)
	e := edit(closed, core.MessageRef{})
	checkLimits(t, closed.ID, *e.Content, *e.Components)
	if !strings.Contains(*e.Content, "Answered by") || !strings.Contains(*e.Content, "PostgreSQL") {
		t.Fatalf("the outcome was crowded out:\n%s", *e.Content)
	}
	r := RenderReminder(card.NewReminder(q, core.SurfaceDiscord, "1"))
	checkLimits(t, q.ID, r.Content, nil)
	many := core.Digest{From: asked, To: answered}
	for range 300 {
		many.Open = append(many.Open, q)
	}
	if d := RenderDigest(many); width(d.Content) > maxContent || !strings.Contains(d.Content, "more") {
		t.Fatalf("digest is %d wide", width(d.Content))
	}
}

// TestNoButtonWithoutRef: a ref that cannot encode draws nothing.
func TestNoButtonWithoutRef(t *testing.T) {
	if b := buttons([]card.Action{{Label: "x", Ref: core.Ref{QuestionID: "bad"}}}); len(b) != 0 {
		t.Fatalf("drew %+v", b)
	}
	q := decisionQ()
	q.ID = "not-an-id"
	if m := post(q, false); len(m.Components) != 0 {
		t.Fatalf("buttons for an undrawable ref: %+v", m.Components)
	}
}

// TestNoLinkPreviews: every message askbridge sends or edits on Discord
// suppresses link previews; before, a link in an agent's text put a title
// and image its owner chose ("Approved by Alice") under the card.
func TestNoLinkPreviews(t *testing.T) {
	c := adaptertest.CardFixtures()[0].Card
	ref := core.MessageRef{Surface: core.SurfaceDiscord, Room: "1", ID: "2"}
	for name, flags := range map[string]discordgo.MessageFlags{
		"post":     RenderPost(c).Flags,
		"edit":     RenderEdit(c, ref).Flags,
		"reminder": RenderReminder(c).Flags,
		"digest":   RenderDigest(core.Digest{}).Flags,
		"update":   RenderUpdate(c).Data.Flags,
		"note":     RenderNote("noted").Data.Flags,
	} {
		if flags&discordgo.MessageFlagsSuppressEmbeds == 0 {
			t.Errorf("%s: flags %b, want link previews suppressed", name, flags)
		}
	}
}

// TestDigestSaysItsCountsAreFloors: a digest whose lists core stopped at
// its cap says "N or more" and that more may be left out; before, it gave
// the floor as the count, and counted what it left out in lines (its
// headings among them).
func TestDigestSaysItsCountsAreFloors(t *testing.T) {
	adaptertest.CheckCappedDigest(t, RenderDigest(adaptertest.CappedDigest()).Content)
}
