package discord

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// crowdedBatches are batches of the most calls core takes: each call's
// arguments too long for any card (adaptertest.LongCall, with what
// Discord's markdown and code blocks make of backticks, stars and @),
// under a question of a few paragraphs, of the most core takes, or with
// tools named at core's longest; some calls decided; and one of short
// calls that each have an "Edit and approve", more buttons than
// Discord's rows hold. (The Telegram adapter has its own; they could
// share one in adaptertest.)
func crowdedBatches() map[string]*core.Question {
	call := adaptertest.LongCall("./step.sh --at `date` <in >out @ops *x* && ", 90)
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
	bash := func(int) string { return "Bash" }
	longest := func(i int) string {
		return fmt.Sprintf("t%02d_", i+1) + strings.Repeat("mcp__github__", (core.MaxToolLen-4)/13)
	}
	paragraphs := strings.Repeat("Clean the build tree and rebuild each *package* in turn. ", 27)
	decided := batch(paragraphs, longest) // some calls decided in the console
	for _, i := range []int{0, 3, 4, 9} {
		decideCall(decided, i)
	}
	editable := batch("May I run these?", bash)
	for i := range editable.Calls {
		editable.Calls[i].Arguments = json.RawMessage(fmt.Sprintf(`{"command":"make step%d"}`, i+1))
		editable.Calls[i].Editable = &core.Editable{All: true}
	}
	return map[string]*core.Question{
		"paragraphs":       batch(paragraphs, bash),
		"partly decided":   decided,
		"longest question": batch(strings.Repeat("a<&>'𝄞_*`", core.MaxTextLen/9), bash),
		"longest tools":    batch("May I run these?", longest),
		"editable":         editable,
	}
}

// decideCall records q's call i as approved in the console.
func decideCall(q *core.Question, i int) {
	q.Answers = append(q.Answers, core.ItemAnswer{ItemID: q.Calls[i].ToolCallID, OptionID: core.ApproveOption,
		Decider: core.Decider{Surface: core.SurfaceConsole, ID: "ops", Name: "Ops"}, At: answered})
}

// TestCrowdedBatchApprovesNothingUnseen: on a batch card too crowded to
// show every call's arguments, or with more calls' buttons than
// Discord's five rows hold, each call with buttons shows its tool and a
// cut of its arguments that keeps their start and end and names
// askbridge show (the cut of card.CutMiddle), and each undecided call
// without one has no buttons: the card names it and says how to see and
// answer it, and "Approve all", which would approve it unseen, is gone.
// Each decided call still shows its verdict. The post, the edit and the
// in-place update agree and keep Discord's limits. As the calls with buttons are decided, the others come back
// with theirs. Before, the calls shared the message evenly with no
// floor, so a call with Approve showed a few characters of its
// arguments, or none, and calls past the fourth row had no buttons while
// "Approve all" stayed.
func TestCrowdedBatchApprovesNothingUnseen(t *testing.T) {
	for name, q := range crowdedBatches() {
		t.Run(name, func(t *testing.T) {
			for round := 0; ; round++ {
				c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
				m := RenderPost(c)
				checkLimits(t, q.ID, m.Content, m.Components)
				e := RenderEdit(c, core.MessageRef{Room: roomID, ID: "844397162624450620"})
				u := RenderUpdate(c)
				if *e.Content != m.Content || u.Data.Content != m.Content ||
					!sameComponents(*e.Components, m.Components) || !sameComponents(u.Data.Components, m.Components) {
					t.Fatalf("the post, edit and update differ:\n%s", m.Content)
				}
				labels := checkCrowded(t, q, m.Content, m.Components)
				if t.Failed() {
					return
				}
				// Decide the calls that have buttons; the rest come back.
				n := 0
				for i := range q.Calls {
					if labels[fmt.Sprintf("%d. %s", i+1, card.LabelApprove)] {
						decideCall(q, i)
						n++
					}
				}
				if len(q.Answers) == len(q.Calls) {
					return
				}
				if n == 0 {
					t.Fatalf("round %d: %d calls undecided and none has buttons:\n%s", round, len(q.Calls)-len(q.Answers), m.Content)
				}
			}
		})
	}
}

// checkCrowded checks a batch card's content and buttons as
// TestCrowdedBatchApprovesNothingUnseen says, and returns the buttons'
// labels.
func checkCrowded(t *testing.T, q *core.Question, content string, comps []discordgo.MessageComponent) map[string]bool {
	t.Helper()
	labels := map[string]bool{}
	for _, row := range comps {
		for _, b := range row.(discordgo.ActionsRow).Components {
			labels[b.(discordgo.Button).Label] = true
		}
	}
	for _, l := range []string{card.LabelDenyAll, card.LabelDecline} {
		if !labels[l] {
			t.Errorf("no %q, which approves nothing", l)
		}
	}
	parts := callParts(content)
	verdicts := verdictsSaid(content)
	buttoned, unseen := 0, 0
	for i, bc := range q.Calls {
		if _, decided := q.Answered(bc.ToolCallID); decided {
			// Partial decisions show on every card, however crowded.
			if !strings.Contains(parts[i+1], "**Decided:** Approved (by Ops)") && verdicts[i+1] != "Approved (by Ops)" {
				t.Errorf("call %d was decided, and the card does not say so:\n%s", i+1, content)
			}
			continue
		}
		n := i + 1
		has := false
		for l := range labels {
			has = has || strings.HasPrefix(l, fmt.Sprintf("%d. ", n))
		}
		if has {
			buttoned++
			if !strings.Contains(parts[n], "Tool: **"+escape(bc.Tool, 2*core.MaxToolLen)+"**\n") {
				t.Errorf("call %d has buttons but its tool is not shown whole:\n%s", n, parts[n])
			}
			blocks := codeBlocks.FindAllStringSubmatch(parts[n], -1)
			if len(blocks) != 1 {
				t.Errorf("call %d has buttons but shows %d code blocks:\n%s", n, len(blocks), content)
				continue
			}
			checkNamedCut(t, n, core.PrettyJSON(bc.Arguments), q.ID, strings.ReplaceAll(blocks[0][1], "`\u200b", "`"))
			continue
		}
		unseen++
		said := regexp.MustCompile(fmt.Sprintf(`\b%d\b[^\n]*askbridge show %s`, n, q.ID))
		if !said.MatchString(afterCalls(content)) {
			t.Errorf("call %d has no buttons, and the card does not say how to see and answer it:\n%s", n, content)
		}
	}
	if unseen > 0 && labels[card.LabelApproveAll] {
		t.Errorf("%d calls have no buttons, yet %q approves them:\n%s", unseen, card.LabelApproveAll, content)
	}
	if unseen == 0 && !labels[card.LabelApproveAll] {
		t.Errorf("every call has its buttons, yet no %q", card.LabelApproveAll)
	}
	if buttoned < min(2, len(q.Calls)-len(q.Answers)) {
		t.Errorf("only %d calls have buttons:\n%s", buttoned, content)
	}
	return labels
}

// callHead starts a batch call's part of a card's content: its number.
var callHead = regexp.MustCompile(`\n\n(\d+)\. Tool: \*\*`)

// callParts are the content of each call a batch card shows, by number.
func callParts(content string) map[int]string {
	parts := map[int]string{}
	locs := callHead.FindAllStringSubmatchIndex(content, -1)
	for k, loc := range locs {
		end := len(content)
		if k+1 < len(locs) {
			end = locs[k+1][0]
		}
		var n int
		fmt.Sscan(content[loc[2]:loc[3]], &n)
		parts[n] = content[loc[0]:end]
	}
	return parts
}

// verdictsSaid are the verdicts and deciders a card's lines of verdicts
// (verdictLine) give, by call number.
func verdictsSaid(content string) map[int]string {
	said := map[int]string{}
	for l := range verdictLines(content) {
		m := verdictLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var from, to int
		fmt.Sscan(m[1], &from)
		to = from
		if m[2] != "" {
			fmt.Sscan(m[2], &to)
		}
		for n := from; n <= to; n++ {
			said[n] = m[3] + " (by " + m[4] + ")"
		}
	}
	return said
}

// afterCalls is the part of a card's content after its last code block.
func afterCalls(content string) string {
	return content[strings.LastIndex(content, "\n```")+1:]
}

// checkNamedCut checks shown, what a card of question id shows of call
// n's arguments body (the zero-width spaces after backticks taken out):
// the whole, or a start and an end of body around a line that counts the
// characters left out right and names askbridge show id.
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

// sameComponents reports whether two lists of components draw the same
// buttons.
func sameComponents(a, b []discordgo.MessageComponent) bool {
	ja, errA := discordgo.Marshal(a)
	jb, errB := discordgo.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
