package telegram

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// batchOf is an open batch of n calls of tool, the i-th with the
// arguments args(i).
func batchOf(n int, tool func(i int) string, args func(i int) string) *core.Question {
	q := approval()
	q.Call = nil
	q.Text = "May I run these commands?"
	for i := range n {
		raw, _ := json.Marshal(map[string]string{"command": args(i)})
		q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), ToolCall: core.ToolCall{
			Tool: tool(i), Arguments: raw, ArgumentsSHA256: fmt.Sprintf("%02d%062d", i+1, 0)}})
	}
	return q
}

// rendered is a card's post as Telegram would show it: its plain text
// and its buttons' labels, after the checks Telegram makes of the wire.
func rendered(t *testing.T, c card.Card) (string, []string) {
	t.Helper()
	m, err := RenderCard(c, -1001)
	if err != nil {
		t.Fatal(err)
	}
	checkWire(t, wire(t, m))
	plain, err := telegramfake.PlainText(m.Text)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	if kb, ok := m.ReplyMarkup.(tgbotapi.InlineKeyboardMarkup); ok {
		for _, row := range kb.InlineKeyboard {
			for _, b := range row {
				labels = append(labels, b.Text)
			}
		}
	}
	return plain, labels
}

// TestBatchCardShowsEveryCall: a batch of the most calls core takes,
// each with arguments too long for all to fit whole, shows every call
// whose buttons the keyboard draws: its numbered tool line, the start of
// its arguments and its hash, the arguments cut evenly. Before, the text
// stopped after call 10 while the keyboard offered "20. Approve" and
// "Approve all". Twenty cuts that name askbridge show do not fit in one
// message, so the last calls have no buttons, and nor has "Approve all"
// (TestCrowdedBatchApprovesNothingUnseen); the first are all drawn.
func TestBatchCardShowsEveryCall(t *testing.T) {
	q := batchOf(core.MaxBatchCalls, func(int) string { return "shell.run" },
		func(i int) string { return fmt.Sprintf("call%02d ", i+1) + strings.Repeat("x", 300) })
	plain, labels := rendered(t, cardOf(q))
	drawn := 0
	for drawn < len(q.Calls) && slices.Contains(labels, fmt.Sprintf("%d. %s", drawn+1, card.LabelApprove)) {
		drawn++
	}
	if all := slices.Contains(labels, card.LabelApproveAll); all != (drawn == len(q.Calls)) || drawn < 10 {
		t.Fatalf("calls 1-%d have buttons, %q: %v", drawn, card.LabelApproveAll, all)
	}
	var shown []int
	for i := range q.Calls[:drawn] {
		for _, want := range []string{fmt.Sprintf("%d. Tool: shell.run", i+1), fmt.Sprintf(`"command": "call%02d x`, i+1),
			"sha256 " + q.Calls[i].ArgumentsSHA256[:12] + "…"} {
			if !strings.Contains(plain, want) {
				t.Errorf("call %d has a button but the card does not show %q", i+1, want)
			}
		}
		if strings.Contains(plain, fmt.Sprintf("call%02d ", i+1)) {
			shown = append(shown, strings.Count(plain[strings.Index(plain, fmt.Sprintf("call%02d ", i+1)):], "x"))
		}
	}
	if t.Failed() {
		t.Fatalf("card:\n%s", plain)
	}
	// Evenly: the first call's arguments are not kept whole at the cost
	// of the last one's.
	if n := len(shown); n == drawn {
		first := strings.Count(strings.SplitN(plain[strings.Index(plain, "call01 "):], "\n", 2)[0], "x")
		last := strings.Count(strings.SplitN(plain[strings.Index(plain, fmt.Sprintf("call%02d ", n)):], "\n", 2)[0], "x")
		if first-last > 2 || last-first > 2 {
			t.Errorf("arguments cut unevenly: call 1 shows %d x, call %d shows %d", first, n, last)
		}
	}
}

// TestDecisionCardShowsEveryOption: a decision of the most options core
// takes, with write-ups too long for all to fit whole, shows every
// option's number and title, and the recommended one's marker, the
// write-ups cut evenly. Before, options 8-10, the recommended one among
// them, were left out while their buttons were drawn.
func TestDecisionCardShowsEveryOption(t *testing.T) {
	q := decision()
	q.Options = nil
	for i := range core.MaxOptions {
		q.Options = append(q.Options, core.Option{ID: fmt.Sprintf("o%d", i+1), Title: fmt.Sprintf("Option number %d", i+1),
			Writeup: fmt.Sprintf("Write-up %d: ", i+1) + strings.Repeat("trade-off ", 95), Recommended: i == core.MaxOptions-1})
	}
	plain, labels := rendered(t, cardOf(q))
	for i, o := range q.Options {
		label := o.Title
		if o.Recommended {
			label += card.RecommendedNote
		}
		if !strings.Contains(strings.Join(labels, "\n"), label) {
			t.Fatalf("option %d has no button: %q", i+1, labels)
		}
		for _, want := range []string{fmt.Sprintf("%d. %s\n", i+1, label), fmt.Sprintf("Write-up %d: trade-off", i+1)} {
			if !strings.Contains(plain, want) {
				t.Errorf("option %d has a button but the card does not show %q", i+1, want)
			}
		}
	}
	if t.Failed() {
		t.Fatalf("card:\n%s", plain)
	}
}

// TestWorstOpenCardsShowEveryButtonsPart: with every field at core's
// maximum and full of text that escapes long (a quorum's tally too), an
// open card still shows the start of its question and, for every section
// the keyboard draws buttons for, its numbered line: a call's tool line
// and hash, an option's title and marker, a form item's question and its
// choices' labels.
func TestWorstOpenCardsShowEveryButtonsPart(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a<&>'𝄞", n/6) }
	fill := func(q *core.Question) *core.Question {
		q.Text, q.Context = long(core.MaxTextLen), long(core.MaxContextLen)
		q.Agent, q.RunID = core.AgentID(long(core.MaxIDLen)), core.RunID(long(core.MaxIDLen))
		q.Labels.Project, q.Labels.Task = long(core.MaxIDLen), long(core.MaxIDLen)
		q.Reversibility = core.Unclassified
		return q
	}
	batch := fill(batchOf(core.MaxBatchCalls, func(i int) string { return fmt.Sprintf("t%02d", i+1) + long(core.MaxToolLen-3) },
		func(int) string { return long(700) }))
	dec := fill(decision())
	dec.Options, dec.Quorum = nil, 3
	for i := range core.MaxOptions {
		id := fmt.Sprintf("o%d", i+1)
		dec.Options = append(dec.Options, core.Option{ID: id, Title: fmt.Sprintf("O%d", i+1) + long(core.MaxTitleLen-3),
			Writeup: long(core.MaxWriteupLen), Recommended: i == core.MaxOptions-1})
		dec.Votes = append(dec.Votes, core.Vote{Key: "k" + id, Choice: id, At: t0,
			Decider: core.Decider{Surface: core.SurfaceTelegram, ID: "1", Name: long(core.MaxTitleLen)}})
	}
	frm := fill(form())
	frm.Items = nil
	for i := range core.MaxItems {
		it := core.FormItem{ID: fmt.Sprintf("i%d", i+1), Question: fmt.Sprintf("I%d", i+1) + long(core.MaxTextLen)}
		for j := range core.MaxItemOptions {
			it.Options = append(it.Options, core.FormOption{ID: fmt.Sprintf("c%d", j+1), Label: fmt.Sprintf("C%d.%d", i+1, j+1) + long(core.MaxTitleLen),
				Description: long(core.MaxWriteupLen), Recommended: j == core.MaxItemOptions-1})
		}
		frm.Items = append(frm.Items, it)
	}
	for _, q := range []*core.Question{batch, dec, frm} {
		c := cardOf(q)
		plain, labels := rendered(t, c)
		if !strings.Contains(plain, " UTC\n\na<") { // the line after "Answer by"
			t.Errorf("%s: the card does not show its question", q.Kind)
		}
		for _, s := range c.Sections {
			if len(s.Actions) == 0 || !slices.Contains(labels, cutPlain(s.Actions[0].Head(), maxLabel)) {
				continue // no buttons drawn (TestCrowdedBatchApprovesNothingUnseen)
			}
			var want []string
			switch s.Kind {
			case card.SectionCall:
				want = []string{fmt.Sprintf("%d. Tool: t%02d", s.Index+1, s.Index+1), "sha256 " + s.Hash + "…"}
			case card.SectionOption:
				want = []string{fmt.Sprintf("%d. O%d", s.Index+1, s.Index+1)}
				if s.Recommended {
					want = append(want, card.RecommendedNote)
				}
			case card.SectionItem:
				want = []string{fmt.Sprintf("%d. I%d", s.Index+1, s.Index+1)}
				for j := range s.Choices {
					want = append(want, fmt.Sprintf("• C%d.%d", s.Index+1, j+1))
				}
			}
			for _, w := range want {
				if !strings.Contains(plain, w) {
					t.Errorf("%s: section %d has buttons but the card does not show %q", q.Kind, s.Index+1, w)
				}
			}
		}
		if t.Failed() {
			t.Fatalf("%s card:\n%s", q.Kind, plain)
		}
	}
}
