package telegram

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

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

// crowdedBatches are adaptertest.CrowdedBatches of Telegram's approval.
func crowdedBatches() map[string]*core.Question { return adaptertest.CrowdedBatches(approval, t0) }

// TestCrowdedBatchApprovesNothingUnseen: on a batch card too crowded to
// show every call's arguments, each call with buttons shows its tool
// whole and a cut of its arguments that keeps their start and end and
// names askbridge show (the cut of card.CutMiddle), and each undecided
// call without one has no buttons: the card names it and says how to see
// and answer it, and "Approve all", which would approve it unseen, is
// gone. The message keeps Telegram's limit. Before, the arguments of
// calls 10-20 were left out whole (their share fell under 16 units) while
// "10. Approve" to "20. Approve" and "Approve all" stayed; then long
// tools beside their Approve were cut to 22 characters.
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
	buttoned, unseen, undecided := 0, 0, 0
	for i, bc := range q.Calls {
		if _, decided := q.Answered(bc.ToolCallID); decided {
			continue
		}
		undecided++
		n := i + 1
		if labels[fmt.Sprintf("%d. %s", n, card.LabelApprove)] {
			buttoned++
			if tool := "Tool: <code>" + html.EscapeString(bc.Tool) + "</code>"; !strings.Contains(parts[n], tool) {
				t.Errorf("call %d has buttons but does not show its tool whole:\n%s", n, parts[n])
			}
			blocks := preBlocks.FindAllStringSubmatch(parts[n], -1)
			if len(blocks) != 1 {
				t.Errorf("call %d has buttons but shows %d <pre>", n, len(blocks))
				continue
			}
			adaptertest.CheckNamedCut(t, n, core.PrettyJSON(bc.Arguments), q.ID, html.UnescapeString(blocks[0][1]))
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
	if buttoned < min(2, undecided) {
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

// TestToolBesideButtonsIsWhole: a call's tool is written whole beside
// the buttons that approve it, however much its name grows escaped.
// Before, a tool was cut at 130 units, so one of core's longest names
// with an "&" in each place (640 units escaped) read as its first 26
// characters, and a crowded batch cut its calls' tools to share room
// with the question.
func TestToolBesideButtonsIsWhole(t *testing.T) {
	q := approval()
	q.Call.Tool = strings.Repeat("&", core.MaxToolLen)
	m, err := RenderCard(cardOf(q), -1001)
	if err != nil {
		t.Fatal(err)
	}
	if !labelsOf(m)[card.LabelApprove] {
		t.Fatalf("no %q: %v", card.LabelApprove, labelsOf(m))
	}
	if tool := "Tool: <code>" + html.EscapeString(q.Call.Tool) + "</code>"; !strings.Contains(m.Text, tool) {
		t.Errorf("the tool is not whole:\n%s", m.Text)
	}
}
