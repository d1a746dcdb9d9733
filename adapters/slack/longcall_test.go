package slack

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// TestLongCallShowsItsEnd: a call's arguments too long for the card keep
// their end (the pipe to a shell, the sandbox key after the command) and
// say how many characters were left out and where to read the whole call,
// on an approval and on each call of a batch; before, the card showed
// only their start, cut with "…", and Approve approved what it hid.
func TestLongCallShowsItsEnd(t *testing.T) {
	call := adaptertest.LongCall("./step.sh --verbose <in >out && ", 90)
	budgets := map[string]int{"approval": budgetArgs, "batch": budgetCalls / 3}
	for name, q := range adaptertest.LongCallQuestions(approvalQ, call) {
		t.Run(name, func(t *testing.T) {
			m := cardFor(q, false)
			checkLimits(t, m)
			blocks := []string{"call"}
			if len(q.Calls) > 0 {
				blocks = []string{"call-0", "call-1", "call-2"}
			}
			for _, id := range blocks {
				text := blockText(t, m, id)
				fenced := text[strings.Index(text, "```") : strings.LastIndex(text, "```")+3]
				if n, budget := textLen(fenced), budgets[name]; n > budget || n < budget-10 {
					t.Errorf("%s: the arguments take %d characters of their %d", id, n, budget)
				}
				if !strings.Contains(fenced, "&amp;&amp; ./step.sh --verbose &lt;in &gt;out") {
					t.Errorf("%s: the arguments are not escaped:\n%s", id, fenced)
				}
				adaptertest.CheckCutCall(t, call, q.ID, unescape(strings.Trim(fenced, "`")))
			}
		})
	}
}

// blockText is the text of m's section block id.
func blockText(t *testing.T, m Message, id string) string {
	t.Helper()
	for _, b := range m.Blocks {
		if s, ok := b.(*slack.SectionBlock); ok && s.BlockID == id {
			return s.Text.Text
		}
	}
	t.Fatalf("no section %q", id)
	return ""
}

// TestLongCallFencesStayBroken: arguments full of fences, cut in the
// middle, still hold no fence of their own (ours open and close the
// block, and nothing else), fit their budget and end as the call does.
func TestLongCallFencesStayBroken(t *testing.T) {
	s := `{"a": "` + strings.Repeat("```<", 1000) + ` | sh"}`
	got := code(s, 300, qid)
	if n := strings.Count(got, "```"); n != 2 {
		t.Errorf("%d fences in\n%s", n, got)
	}
	if n := textLen(got); n > 300 {
		t.Errorf("%d characters, over 300:\n%s", n, got)
	}
	if !strings.HasSuffix(got, "&lt; | sh\"}```") || !strings.Contains(got, card.LeftOut) {
		t.Errorf("the call's end or the line is missing:\n%s", got)
	}
}
