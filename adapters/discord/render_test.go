package discord

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
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
	raw, err := discordgo.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s differs from the golden file (run with -update if the change is meant):\n%s", name, buf.String())
	}
}

// The questions every renderer is checked on. Ids are fixed so the
// golden files are stable.
func baseQ(id string, kind core.Kind) *core.Question {
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

func TestGoldenPosts(t *testing.T) {
	half := formQ()
	half.Answers = []core.ItemAnswer{{ItemID: "day", OptionID: "fri", Decider: alicePublic, At: answered}}
	for name, v := range map[string]any{
		"post_clarification":    RenderPost(clarificationQ(), false),
		"post_decision":         RenderPost(decisionQ(), false),
		"post_approval":         RenderPost(approvalQ(), false),
		"post_form":             RenderPost(formQ(), false),
		"post_decision_escal":   RenderPost(decisionQ(), true),
		"edit_form_progress":    RenderEdit(half, core.MessageRef{Room: "345626669114982402", ID: "844397162624450620"}),
		"reminder":              RenderReminder(withCard(decisionQ()), "345626669114982402"),
		"reminder_without_card": RenderReminder(decisionQ(), "345626669114982402"),
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, v) })
	}
}

func withCard(q *core.Question) *core.Question {
	q.Messages = []core.MessageRef{{Surface: core.SurfaceDiscord, Room: "345626669114982402", ID: "844397162624450620"}}
	return q
}

func TestGoldenClosed(t *testing.T) {
	yes, no := true, false
	card := core.MessageRef{Room: "345626669114982402", ID: "844397162624450620"}
	full := formQ()
	full.Answers = []core.ItemAnswer{
		{ItemID: "day", OptionID: "fri", Decider: alicePublic, At: answered},
		{ItemID: "notes", Text: "Only the security fixes", Decider: alicePublic, At: answered},
	}
	for name, q := range map[string]*core.Question{
		"closed_decision": closeAs(decisionQ(), core.StateAnswered, alicePublic, func(r *core.Resolution) {
			r.OptionID, r.Answer = "ddb", "Scales out; queries are constrained."
		}),
		"closed_clarification": closeAs(clarificationQ(), core.StateAnswered, alicePublic, func(r *core.Resolution) { r.Answer = "eu-west-1, *next* to the app" }),
		"closed_approval_denied": closeAs(approvalQ(), core.StateAnswered, alicePublic, func(r *core.Resolution) {
			r.Approved, r.Reason = &no, "not on a Friday"
		}),
		"closed_approval_approved": closeAs(approvalQ(), core.StateAnswered, core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops"}, func(r *core.Resolution) { r.Approved = &yes }),
		"closed_form":              closeAs(full, core.StateAnswered, alicePublic, nil),
		"closed_expired":           closeAs(decisionQ(), core.StateExpired, core.System, func(r *core.Resolution) { r.Reason = core.ExpiredReason }),
		"closed_declined":          closeAs(clarificationQ(), core.StateDeclined, alicePublic, nil),
	} {
		t.Run(name, func(t *testing.T) {
			e := RenderEdit(q, card)
			if e.Components == nil || len(*e.Components) != 0 || e.Content == nil {
				t.Fatal("a closed card's edit must set content and an empty component list")
			}
			golden(t, name, e)
		})
	}
}

func TestGoldenResponses(t *testing.T) {
	modal := func(q *core.Question, r core.Ref) *discordgo.InteractionResponse {
		m, ok := RenderModal(q, r)
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
		"response_update":     RenderUpdate(closed),
		"response_note":       RenderNote(core.RefusalNote(&core.ClosedError{Question: closed})),
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
		if _, ok := RenderModal(tc.q, tc.r); ok {
			t.Fatalf("modal for %+v on a %s", tc.r, tc.q.Kind)
		}
	}
}

// checkLimits fails if the message breaks a Discord limit or carries a
// button whose custom_id is not a ref to q.
func checkLimits(t *testing.T, q *core.Question, content string, comps []discordgo.MessageComponent) {
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
			if err != nil || r.QuestionID != q.ID || len(btn.CustomID) > maxCustomID {
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
	q.Agent, q.Labels = strings.Repeat("a", core.MaxIDLen), core.Labels{Project: strings.Repeat("_", core.MaxIDLen), Task: strings.Repeat("🚀", core.MaxIDLen)}
	q.Text, q.Context = long(core.MaxTextLen), long(core.MaxContextLen)
	q.Options = nil
	for i := range core.MaxOptions {
		q.Options = append(q.Options, core.Option{ID: fmt.Sprint(i), Title: long(core.MaxTitleLen), Writeup: long(core.MaxWriteupLen), Recommended: i == 3})
	}
	m := RenderPost(q, true)
	checkLimits(t, q, m.Content, m.Components)
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
	m = RenderPost(f, false)
	checkLimits(t, f, m.Content, m.Components)
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
	m = RenderPost(a, false)
	checkLimits(t, a, m.Content, m.Components)
	if strings.Count(m.Content, "```") != 2 {
		t.Fatalf("the arguments' fences leaked out of the code block:\n%s", m.Content)
	}

	closed := closeAs(decisionQ(), core.StateAnswered, core.Decider{Surface: core.SurfaceDiscord, ID: "1", Name: long(200)}, func(r *core.Resolution) {
		r.OptionID, r.Reason = "pg", long(core.MaxReasonLen)
	})
	closed.Text = long(core.MaxTextLen)
	e := RenderEdit(closed, core.MessageRef{})
	checkLimits(t, closed, *e.Content, *e.Components)
	if !strings.Contains(*e.Content, "Answered by") || !strings.Contains(*e.Content, "PostgreSQL") {
		t.Fatalf("the outcome was crowded out:\n%s", *e.Content)
	}
	r := RenderReminder(q, "1")
	checkLimits(t, q, r.Content, nil)
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
	if b := button("x", discordgo.PrimaryButton, core.Ref{QuestionID: "bad"}); b != nil {
		t.Fatalf("drew %+v", b)
	}
	q := decisionQ()
	q.ID = "not-an-id"
	if m := RenderPost(q, false); len(m.Components) != 0 {
		t.Fatalf("buttons for an undrawable ref: %+v", m.Components)
	}
}
