package telegram

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// callHead starts a batch call's part of a card's HTML: its number.
var callHead = regexp.MustCompile(`\n\n(\d+)\. Tool: <code>`)

// callParts are the HTML of each call a batch card shows, by number.
func callParts(text string) map[int]string {
	parts := map[int]string{}
	locs := callHead.FindAllStringSubmatchIndex(text, -1)
	for k, loc := range locs {
		end := len(text)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		var n int
		fmt.Sscan(text[loc[2]:loc[3]], &n)
		parts[n] = text[loc[0]:end]
	}
	return parts
}

// labelsOf are a message's buttons' labels.
func labelsOf(m tgbotapi.MessageConfig) map[string]bool {
	labels := map[string]bool{}
	if kb, ok := m.ReplyMarkup.(tgbotapi.InlineKeyboardMarkup); ok {
		for _, row := range kb.InlineKeyboard {
			for _, b := range row {
				labels[b.Text] = true
			}
		}
	}
	return labels
}

// crowdedBatches are batches of the most calls core takes, each call's
// arguments too long for any card (adaptertest.LongCall), under a
// question of a few paragraphs, of the most core takes, or with tools
// named at core's longest: the budget cannot give every call a cut that
// names askbridge show.
func crowdedBatches() map[string]*core.Question {
	call := adaptertest.LongCall("./step.sh <in >out @ops && ", 90)
	batch := func(text string, tool func(i int) string) *core.Question {
		q := approval()
		q.Call, q.Text = nil, text
		for i := range core.MaxBatchCalls {
			c := call
			c.Tool = tool(i)
			q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), ToolCall: c})
		}
		return q
	}
	bash := func(int) string { return "Bash" }
	paragraphs := strings.Repeat("Clean the build tree and rebuild each package in turn. ", 27)
	decided := batch(paragraphs, bash) // some calls decided in the console
	for _, i := range []int{0, 3, 4, 9} {
		decided.Answers = append(decided.Answers, core.ItemAnswer{ItemID: decided.Calls[i].ToolCallID, OptionID: core.ApproveOption,
			Decider: core.Decider{Surface: core.SurfaceConsole, ID: "ops", Name: "Ops"}, At: t0})
	}
	return map[string]*core.Question{
		"paragraphs":       batch(paragraphs, bash),
		"partly decided":   decided,
		"longest question": batch(strings.Repeat("a<&>'𝄞", core.MaxTextLen/6), bash),
		"longest tools": batch("May I run these?", func(i int) string {
			return fmt.Sprintf("t%02d_", i+1) + strings.Repeat("mcp__github__", (core.MaxToolLen-4)/13)
		}),
	}
}

// TestCrowdedBatchApprovesNothingUnseen: on a batch card too crowded to
// show every call's arguments, each call with buttons shows a cut of its
// arguments that keeps their start and end and names askbridge show (the
// cut of card.CutMiddle), and each undecided call without one has no
// buttons: the card names it and says how to see and answer it, and
// "Approve all", which would approve it unseen, is gone. The message
// keeps Telegram's limit. Before, the arguments of calls 10-20 were left
// out whole (their share fell under 16 units) while "10. Approve" to
// "20. Approve" and "Approve all" stayed.
func TestCrowdedBatchApprovesNothingUnseen(t *testing.T) {
	for name, q := range crowdedBatches() {
		t.Run(name, func(t *testing.T) {
			c := cardOf(q)
			rendered(t, c) // Telegram's checks of the wire
			m, err := RenderCard(c, -1001)
			if err != nil {
				t.Fatal(err)
			}
			checkCrowded(t, q, m.Text, labelsOf(m))
			e, err := RenderEdit(c, -1001, 7)
			if err != nil {
				t.Fatal(err)
			}
			if e.Text != m.Text || !equalKeyboards(*e.ReplyMarkup, m.ReplyMarkup) {
				t.Errorf("the edit differs from the post:\n%s", e.Text)
			}
		})
	}
}

// checkCrowded checks a batch card's text and buttons (labels) as
// TestCrowdedBatchApprovesNothingUnseen says.
func checkCrowded(t *testing.T, q *core.Question, text string, labels map[string]bool) {
	t.Helper()
	plain := html.UnescapeString(text)
	parts := callParts(text)
	buttoned, unseen := 0, 0
	for i, bc := range q.Calls {
		if _, decided := q.Answered(bc.ToolCallID); decided {
			continue
		}
		n := i + 1
		if labels[fmt.Sprintf("%d. %s", n, card.LabelApprove)] {
			buttoned++
			blocks := preBlocks.FindAllStringSubmatch(parts[n], -1)
			if len(blocks) != 1 {
				t.Errorf("call %d has buttons but shows %d <pre>", n, len(blocks))
				continue
			}
			checkNamedCut(t, n, core.PrettyJSON(bc.Arguments), q.ID, html.UnescapeString(blocks[0][1]))
			continue
		}
		unseen++
		for l := range labels {
			if strings.HasPrefix(l, fmt.Sprintf("%d. ", n)) {
				t.Errorf("call %d has no Approve but has %q", n, l)
			}
		}
		if !regexp.MustCompile(fmt.Sprintf(`\b%d\b[^\n]*askbridge show %s`, n, q.ID)).MatchString(afterCalls(plain)) {
			t.Errorf("call %d has no buttons, and the card does not say how to see and answer it:\n%s", n, plain)
		}
	}
	if unseen > 0 && labels[card.LabelApproveAll] {
		t.Errorf("%d calls are not shown, yet %q approves them", unseen, card.LabelApproveAll)
	}
	if buttoned < 2 {
		t.Errorf("only %d calls have buttons", buttoned)
	}
}

// afterCalls is the part of a card's text after its last call's <pre>.
func afterCalls(plain string) string {
	return plain[strings.LastIndex(plain, "</pre>")+1:]
}

// equalKeyboards reports whether two reply markups draw the same buttons.
func equalKeyboards(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// checkNamedCut checks shown, what a card of question id shows of call
// n's arguments body (escaping undone): the whole, or a start and an end
// of body around a line that counts the characters left out right and
// names askbridge show id.
func checkNamedCut(t *testing.T, n int, body string, id core.QuestionID, shown string) {
	t.Helper()
	if shown == body {
		return
	}
	line := "; the whole call: askbridge show " + string(id) + " …\n"
	at := strings.Index(shown, line)
	start := strings.LastIndex(shown[:max(at, 0)], "\n… ")
	if at < 0 || start < 0 {
		t.Errorf("call %d: no line names askbridge show %s:\n%s", n, id, shown)
		return
	}
	head, tail := shown[:start], shown[at+len(line):]
	var left int
	if _, err := fmt.Sscanf(shown[start:at], "\n… %d "+card.LeftOut, &left); err != nil {
		t.Errorf("call %d: %q counts nothing: %v", n, shown[start:at], err)
		return
	}
	if head == "" || tail == "" || !strings.HasPrefix(body, head) || !strings.HasSuffix(body, tail) {
		t.Errorf("call %d: not the arguments' start and end:\n%s", n, shown)
		return
	}
	if want := utf8.RuneCountInString(body) - utf8.RuneCountInString(head+tail); left != want {
		t.Errorf("call %d: the line says %d characters left out, %d were", n, left, want)
	}
}
