package slack

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// crowdedBatches are batches of the most calls core takes, each call's
// arguments too long for any card (adaptertest.LongCall), under a
// question of a few paragraphs or of the most core takes, with tools
// named at core's longest, with some calls decided, or with every button
// a call can have: no budget gives every call a cut that names askbridge
// show.
func crowdedBatches() map[string]*core.Question {
	call := adaptertest.LongCall("./step.sh <in >out @ops && ", 90)
	batch := func(text string, tool func(i int) string) *core.Question {
		q := approvalQ()
		q.Call, q.Text = nil, text
		for i := range core.MaxBatchCalls {
			c := call
			c.Tool = tool(i)
			q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), ToolCall: c})
		}
		return q
	}
	decide := func(q *core.Question, calls ...int) *core.Question {
		for _, i := range calls {
			q.Answers = append(q.Answers, core.ItemAnswer{ItemID: q.Calls[i].ToolCallID, OptionID: core.ApproveOption,
				Decider: core.Decider{Surface: core.SurfaceConsole, ID: "ops", Name: "Ops"}, At: t0})
		}
		return q
	}
	bash := func(int) string { return "Bash" }
	longTool := func(i int) string {
		return fmt.Sprintf("t%02d_", i+1) + strings.Repeat("mcp__github__", (core.MaxToolLen-4)/13)
	}
	paragraphs := strings.Repeat("Clean the build tree and rebuild each package in turn. ", 27)
	longest := strings.Repeat("a<&>'𝄞", core.MaxTextLen/6)
	every := batch(longest, longTool)
	every.Context = strings.Repeat("Context & <more> ", core.MaxContextLen/17)
	for i := range every.Calls {
		every.Calls[i].Editable = &core.Editable{All: true}
		every.Calls[i].Standing = &core.StandingOffer{Hours: 8}
	}
	return map[string]*core.Question{
		"paragraphs":       batch(paragraphs, bash),
		"partly decided":   decide(batch(longest, longTool), 0, 3, 4, 9),
		"longest question": batch(longest, bash),
		"longest tools":    batch("May I run these?", longTool),
		"longest of all":   batch(longest, longTool),
		"every button":     every,
		"all but one":      decide(batch(longest, longTool), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19),
	}
}

// TestCrowdedBatchApprovesNothingUnseen: on a batch card too crowded to
// show every call's arguments, each call with buttons shows its tool whole
// and a cut of its arguments that keeps their start and end and names
// askbridge show (the cut of card.CutMiddle), and each undecided call without one has no
// buttons: the card names it and says how to see and answer it, and
// "Approve all", which would approve it unseen, is gone ("Deny all" and
// "Decline" stay). The message keeps Slack's limits. Before, long tool
// names or a long question cut the arguments of calls with live Approve
// buttons to a bare "…" (and their tools to 24 characters), and "Approve
// all" stayed while calls it approves had no buttons of their own.
func TestCrowdedBatchApprovesNothingUnseen(t *testing.T) {
	for name, q := range crowdedBatches() {
		t.Run(name, func(t *testing.T) {
			m := cardFor(q, false)
			checkLimits(t, m)
			if n := jsonLen(m.Blocks); n > maxBlocksJSON {
				t.Fatalf("blocks are %d characters of JSON; keep them under %d", n, maxBlocksJSON)
			}
			checkCrowded(t, q, m)
		})
	}
}

// checkCrowded checks an open batch card m of q as
// TestCrowdedBatchApprovesNothingUnseen says.
func checkCrowded(t *testing.T, q *core.Question, m Message) {
	t.Helper()
	byItem := map[int]map[core.RefAction]bool{}
	for _, b := range buttons(m.Blocks) {
		r, err := core.DecodeRef(b.Value)
		if err != nil {
			t.Fatalf("button %q: %v", b.Value, err)
		}
		if byItem[r.Item] == nil {
			byItem[r.Item] = map[core.RefAction]bool{}
		}
		byItem[r.Item][r.Action] = true
	}
	note := noteText(m)
	buttoned, unseen := 0, 0
	for i, bc := range q.Calls {
		_, decided := q.Answered(bc.ToolCallID)
		switch {
		case decided:
			if len(byItem[i]) > 0 {
				t.Errorf("decided call %d has buttons", i+1)
			}
		case byItem[i][core.RefApprove]:
			buttoned++
			text := blockText(t, m, fmt.Sprintf("call-%d", i))
			open, end := strings.Index(text, "```"), strings.LastIndex(text, "```")
			if open < 0 || end <= open {
				t.Errorf("call %d has buttons but shows no arguments:\n%s", i+1, text)
				continue
			}
			checkNamedCut(t, i+1, core.PrettyJSON(bc.Arguments), q.ID, unescape(text[open+3:end]))
			if !strings.Contains(unescape(text[:open]), "*Tool:* `"+bc.Tool+"`") {
				t.Errorf("call %d has buttons but does not show its tool whole:\n%s", i+1, text[:open])
			}
		default:
			unseen++
			if len(byItem[i]) > 0 {
				t.Errorf("call %d has no Approve but has buttons %v", i+1, byItem[i])
			}
			if !regexp.MustCompile(fmt.Sprintf(`\b%d\b[^\n]*askbridge show %s`, i+1, q.ID)).MatchString(note) {
				t.Errorf("call %d has no buttons, and the card does not say how to see and answer it:\n%s", i+1, note)
			}
		}
	}
	if unseen == 0 && note != "" {
		t.Errorf("every undecided call has buttons, yet the card says:\n%s", note)
	}
	own := byItem[-1]
	if unseen > 0 && own[core.RefApprove] {
		t.Errorf("%d undecided calls have no buttons, yet %q approves them", unseen, card.LabelApproveAll)
	}
	if unseen == 0 && !own[core.RefApprove] {
		t.Errorf("every undecided call has buttons, yet %q is gone", card.LabelApproveAll)
	}
	if !own[core.RefDeny] || !own[core.RefDecline] {
		t.Errorf("%q or Decline is gone: %v", card.LabelDenyAll, own)
	}
	if undecided := len(q.Calls) - len(q.Answers); buttoned < min(2, undecided) {
		t.Errorf("only %d of %d undecided calls have buttons", buttoned, undecided)
	}
}

// noteText is the text of m's context block that names the calls it
// draws no buttons for, or "".
func noteText(m Message) string {
	for _, b := range m.Blocks {
		if c, ok := b.(*slack.ContextBlock); ok && c.BlockID == unbuttonedBlock {
			for _, el := range c.ContextElements.Elements {
				if tx, ok := el.(*slack.TextBlockObject); ok {
					return unescape(tx.Text)
				}
			}
		}
	}
	return ""
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

// TestFloorOfIsTheLeastThatNamesShow: floorOf is the narrowest room in
// which code shows a call's arguments whole or cut around the line that
// names askbridge show, so a crowded card gives a call with buttons no
// more than it needs, and no less.
func TestFloorOfIsTheLeastThatNamesShow(t *testing.T) {
	long := core.PrettyJSON(adaptertest.LongCall("./step.sh <in >out `x` && ", 90).Arguments)
	show := showCommand(qid)
	for name, body := range map[string]string{"long": long, "fences": "```" + long + "```", "short": `{"a": "<&>"}`} {
		t.Run(name, func(t *testing.T) {
			n := floorOf(body, qid)
			whole := "```" + escCode(defence(body), math.MaxInt) + "```"
			if got := code(body, n, qid); got != whole && !strings.Contains(got, show) || textLen(got) > n {
				t.Errorf("code at the floor %d neither is whole nor names %q, or is over:\n%s", n, show, got)
			}
			if got := code(body, n-1, qid); got == whole || strings.Contains(got, show) {
				t.Errorf("code under the floor %d already does:\n%s", n, got)
			}
		})
	}
}
