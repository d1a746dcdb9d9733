package slack

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/slack-go/slack"
)

// crowdedBatches are adaptertest.CrowdedBatches of Slack's approval.
func crowdedBatches() map[string]*core.Question { return adaptertest.CrowdedBatches(approvalQ, t0) }

// TestCrowdedBatchApprovesNothingUnseen: on a batch card too crowded to
// show every call's arguments, each undecided call the card shows (with
// its buttons or without) shows its tool whole and a cut of its arguments
// that keeps their start and end and names askbridge show (the cut of
// card.CutMiddle). The first of them keep their buttons; each of the
// others says how to decide it instead. Only calls that do not fit even
// without buttons are left off, the last ones: the card names them and
// says how to see and answer them, and "Approve all", which would approve
// them unseen, is gone ("Deny all" and "Decline" stay); it is there
// exactly when every undecided call is shown. The message keeps Slack's
// limits. Before, long tool names or a long question cut the arguments of
// calls with live Approve buttons to a bare "…" (and their tools to 24
// characters), and "Approve all" stayed while calls it approves had no
// buttons of their own; then a call that lost its buttons was left off
// whole, though its text fitted without them (seenBefore).
func TestCrowdedBatchApprovesNothingUnseen(t *testing.T) {
	for name, q := range crowdedBatches() {
		t.Run(name, func(t *testing.T) {
			m := cardFor(q, false)
			checkLimits(t, m)
			if n := jsonLen(m.Blocks); n > maxBlocksJSON {
				t.Fatalf("blocks are %d characters of JSON; keep them under %d", n, maxBlocksJSON)
			}
			seen, buttoned := checkCrowded(t, q, m)
			// Calls shown without buttons came back where they let every
			// call be shown; elsewhere calls with buttons come first, as
			// many as before (seenBefore), and no fewer.
			undecided := len(q.Calls) - len(q.Answers)
			switch {
			case seen == undecided:
			case seenBefore[name] >= undecided:
				t.Errorf("the card shows %d of %d undecided calls; it showed every one before", seen, undecided)
			case buttoned < seenBefore[name]:
				t.Errorf("%d calls keep their buttons, and %d did when each call shown had its buttons", buttoned, seenBefore[name])
			}
		})
	}
}

// seenBefore is how many undecided calls each of crowdedBatches' cards
// showed, each with its buttons, before calls could be shown without
// them: the others were left off whole.
var seenBefore = map[string]int{
	"paragraphs": 13, "partly decided": 10, "longest question": 13, "longest tools": 11,
	"longest of all": 11, "every button": 7, "all but one": 1,
}

// TestCrowdedBatchLeavesOffOnlyWhatCannotShow: with every other text cut
// as far as it goes, a crowded batch card shows every undecided call
// where they fit with no call's own buttons, and then gives buttons to as
// many as fit; where they do not all fit (and "Approve all" goes), it
// keeps as many calls with their buttons as fit, and then shows as many
// more as fit without.
func TestCrowdedBatchLeavesOffOnlyWhatCannotShow(t *testing.T) {
	for name, q := range crowdedBatches() {
		t.Run(name, func(t *testing.T) {
			c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
			seen, buttoned := checkCrowded(t, q, Card(c))
			over := func(seen, buttoned int) bool {
				m := render(c, fit{div: maxDiv, seen: seen, buttoned: buttoned, floors: &floors{id: c.QuestionID, of: map[int]int{}}})
				return blocksLen(m.Blocks) > maxBlocksJSON
			}
			undecided := len(q.Calls) - len(q.Answers)
			if seen < undecided && !over(undecided, 0) {
				t.Errorf("%d of %d undecided calls are shown, yet all fit with no call's buttons", seen, undecided)
			}
			if seen < undecided && !over(buttoned+1, buttoned+1) {
				t.Errorf("%d calls are shown with their buttons, yet one more fits with its buttons", buttoned)
			}
			if seen < undecided && !over(seen+1, buttoned) {
				t.Errorf("%d of %d undecided calls are shown, yet one more fits without buttons", seen, undecided)
			}
			if buttoned < seen && !over(seen, buttoned+1) {
				t.Errorf("%d of the %d calls shown have their buttons, yet one more fits with them", buttoned, seen)
			}
		})
	}
}

// checkCrowded checks an open batch card m of q as
// TestCrowdedBatchApprovesNothingUnseen says, and returns how many
// undecided calls it shows, and how many of those have their buttons.
func checkCrowded(t *testing.T, q *core.Question, m Message) (seen, buttoned int) {
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
	own := byItem[-1]
	show := "`askbridge show " + string(q.ID) + "`"
	note := noteText(m)
	unseen := 0
	for i, bc := range q.Calls {
		_, decided := q.Answered(bc.ToolCallID)
		text, shown := sectionText(m, fmt.Sprintf("call-%d", i))
		switch {
		case decided:
			if len(byItem[i]) > 0 {
				t.Errorf("decided call %d has buttons", i+1)
			}
			continue
		case !shown:
			unseen++
			if len(byItem[i]) > 0 {
				t.Errorf("call %d is not shown but has buttons %v", i+1, byItem[i])
			}
			if !regexp.MustCompile(fmt.Sprintf(`\b%d\b[^\n]*askbridge show %s`, i+1, q.ID)).MatchString(note) {
				t.Errorf("call %d is not shown, and the card does not say how to see and answer it:\n%s", i+1, note)
			}
			continue
		}
		seen++
		if unseen > 0 {
			t.Errorf("call %d is shown after a call left off", i+1)
		}
		open, end := strings.Index(text, "```"), strings.LastIndex(text, "```")
		if open < 0 || end <= open {
			t.Errorf("undecided call %d is shown without its arguments:\n%s", i+1, text)
			continue
		}
		adaptertest.CheckNamedCut(t, i+1, core.PrettyJSON(bc.Arguments), q.ID, unescape(text[open+3:end]))
		if !strings.Contains(unescape(text[:open]), "*Tool:* `"+bc.Tool+"`") {
			t.Errorf("undecided call %d does not show its tool whole:\n%s", i+1, text[:open])
		}
		after := text[end+3:]
		if byItem[i][core.RefApprove] {
			buttoned++
			if buttoned < seen {
				t.Errorf("call %d has its buttons after a call shown without them", i+1)
			}
			if strings.Contains(after, show) {
				t.Errorf("call %d has its buttons, yet says to decide it elsewhere:\n%s", i+1, after)
			}
			continue
		}
		if len(byItem[i]) > 0 {
			t.Errorf("call %d has no Approve but has buttons %v", i+1, byItem[i])
		}
		how := []string{show, "*" + card.LabelDenyAll + "*"}
		if own[core.RefApprove] {
			how = append(how, "*"+card.LabelApproveAll+"*")
		}
		for _, w := range how {
			if !strings.Contains(after, w) {
				t.Errorf("call %d is shown without its buttons and does not say to decide it with %s:\n%s", i+1, w, after)
			}
		}
	}
	if unseen == 0 && note != "" {
		t.Errorf("every undecided call is shown, yet the card says:\n%s", note)
	}
	if unseen > 0 && own[core.RefApprove] {
		t.Errorf("%d undecided calls are not shown, yet %q approves them", unseen, card.LabelApproveAll)
	}
	if unseen == 0 && !own[core.RefApprove] {
		t.Errorf("every undecided call is shown, yet %q is gone", card.LabelApproveAll)
	}
	if !own[core.RefDeny] || !own[core.RefDecline] {
		t.Errorf("%q or Decline is gone: %v", card.LabelDenyAll, own)
	}
	return seen, buttoned
}

// sectionText is the text of m's section block id, and whether m has
// one.
func sectionText(m Message, id string) (string, bool) {
	for _, b := range m.Blocks {
		if s, ok := b.(*slack.SectionBlock); ok && s.BlockID == id {
			return s.Text.Text, true
		}
	}
	return "", false
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

// TestCodeFloorIsTheLeastThatNamesShow: codeFloor is the narrowest room
// in which code shows a call's arguments whole or cut around the line
// that names askbridge show, so a crowded card gives a call it shows no
// more than it needs, and no less.
func TestCodeFloorIsTheLeastThatNamesShow(t *testing.T) {
	long := core.PrettyJSON(adaptertest.LongCall("./step.sh <in >out `x` && ", 90).Arguments)
	show := card.ShowCommand(qid)
	for name, body := range map[string]string{"long": long, "fences": "```" + long + "```", "short": `{"a": "<&>"}`} {
		t.Run(name, func(t *testing.T) {
			n := codeFloor(body, qid)
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
