package discord

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

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
// Discord's rows hold. (adaptertest.CrowdedBatches are the other chat
// renderers'; these keep Discord's markdown in the arguments.)
func crowdedBatches() map[string]*core.Question {
	call := adaptertest.LongCall("./step.sh --at `date` <in >out @ops *x* && ", 90)
	batch := func(text string, tool func(i int) string) *core.Question {
		return adaptertest.Batch(approvalQ, call, text, tool)
	}
	bash := func(int) string { return "Bash" }
	longest := adaptertest.LongTool
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

// shortBatch is a batch of the most calls core takes, each short (a
// command of a few words, and its digest): their text fits one message
// easily, their buttons do not fit Discord's five rows.
func shortBatch() *core.Question {
	q := approvalQ()
	q.Call, q.Text = nil, "May I run these?"
	for i := range core.MaxBatchCalls {
		c := adaptertest.LongCall("", 0)
		c.Arguments = json.RawMessage(fmt.Sprintf(`{"command":"make step%d"}`, i+1))
		q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), ToolCall: c})
	}
	return q
}

// TestCrowdedBatchApprovesNothingUnseen: on a batch card too crowded to
// show every call's arguments, or with more calls' buttons than
// Discord's five rows hold, each undecided call is either seen (its tool
// whole and its arguments whole or cut with their start and end around a
// line that names askbridge show: the cut of card.CutMiddle) or left off
// the text, named with how to see and answer it. A seen call has its own
// buttons or the card says how to decide it; a call left off has no
// buttons, nor has the card "Approve all", which stays while every
// undecided call is seen. Each decided call still shows its verdict.
// The post, the edit and the in-place update agree and keep Discord's
// limits. As the calls with buttons are decided, the others come back
// with theirs. Before, the calls shared the message evenly with no
// floor, so a call with Approve showed a few characters of its
// arguments, or none, and calls past the fourth row had no buttons while
// "Approve all" stayed.
func TestCrowdedBatchApprovesNothingUnseen(t *testing.T) {
	batches := crowdedBatches()
	batches["short"] = shortBatch()
	for name, q := range batches {
		t.Run(name, func(t *testing.T) {
			for round := 0; ; round++ {
				m := renderAgreeing(t, q)
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

// TestShortBatchShowsEveryCall: a batch of the most calls core takes,
// each short, shows every call whole and keeps "Approve all": the rows
// hold the buttons of the first ten calls (four rows of five under the
// card's own row, two buttons a call), and the card names the other ten
// and how to decide them. Before, those ten were left off the card as if
// their text did not fit, with "Approve all" gone.
func TestShortBatchShowsEveryCall(t *testing.T) {
	q := shortBatch()
	m := renderAgreeing(t, q)
	labels := checkCrowded(t, q, m.Content, m.Components)
	if !labels[card.LabelApproveAll] {
		t.Errorf("no %q on a batch whose every call fits the message:\n%s", card.LabelApproveAll, m.Content)
	}
	parts := callParts(m.Content)
	for i, bc := range q.Calls {
		if !strings.Contains(parts[i+1], codeOpen+core.PrettyJSON(bc.Arguments)+codeClose) {
			t.Errorf("call %d is not shown whole:\n%s", i+1, m.Content)
		}
	}
	held := (maxRows - 1) * maxButtonsPerRow / 2
	for i := range q.Calls {
		if has := labels[fmt.Sprintf("%d. %s", i+1, card.LabelApprove)]; has != (i < held) {
			t.Errorf("call %d has buttons: %v; the rows hold the first %d calls'", i+1, has, held)
		}
	}
	if len(m.Components) != maxRows {
		t.Errorf("%d rows of buttons; Discord holds %d", len(m.Components), maxRows)
	}
	if said := unbuttonedSaid(m.Content); len(said) != len(q.Calls)-held {
		t.Errorf("the card names %d calls without buttons; %d have none:\n%s", len(said), len(q.Calls)-held, m.Content)
	}
}

// renderAgreeing is q's card as posted, after checking that the post, the
// edit and the in-place update agree and keep Discord's limits.
func renderAgreeing(t *testing.T, q *core.Question) *discordgo.MessageSend {
	t.Helper()
	c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
	m := RenderPost(c)
	checkLimits(t, q.ID, m.Content, m.Components)
	e := RenderEdit(c, core.MessageRef{Room: roomID, ID: "844397162624450620"})
	u := RenderUpdate(c)
	if *e.Content != m.Content || u.Data.Content != m.Content ||
		!sameComponents(*e.Components, m.Components) || !sameComponents(u.Data.Components, m.Components) {
		t.Fatalf("the post, edit and update differ:\n%s", m.Content)
	}
	return m
}

// checkCrowded checks a batch card's content and buttons as
// TestCrowdedBatchApprovesNothingUnseen says, and returns the buttons'
// labels. A seen call without buttons must be one the rows could not
// hold: its buttons and those drawn would overflow them.
func checkCrowded(t *testing.T, q *core.Question, content string, comps []discordgo.MessageComponent) map[string]bool {
	t.Helper()
	labels := map[string]bool{}
	drawn, own := 0, 0
	for _, row := range comps {
		for _, b := range row.(discordgo.ActionsRow).Components {
			l := b.(discordgo.Button).Label
			labels[l] = true
			if numbered.MatchString(l) {
				drawn++
			} else {
				own++
			}
		}
	}
	for _, l := range []string{card.LabelDenyAll, card.LabelDecline} {
		if !labels[l] {
			t.Errorf("no %q, which approves nothing", l)
		}
	}
	c := card.New(q, core.MessageRef{Kind: core.DeliverPost})
	slots := (maxRows - (own+maxButtonsPerRow-1)/maxButtonsPerRow) * maxButtonsPerRow
	parts := callParts(content)
	verdicts := verdictsSaid(content)
	unbuttoned := unbuttonedSaid(content)
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
		part, seen := parts[n]
		switch {
		case has && !seen:
			t.Errorf("call %d has buttons but is not shown:\n%s", n, content)
		case seen && !has && !unbuttoned[n]:
			t.Errorf("call %d is shown without buttons, and the card does not say how to decide it:\n%s", n, content)
		case seen && !has && drawn+len(buttons(c.Sections[i].Actions)) <= slots:
			t.Errorf("call %d is shown without buttons, though the rows hold them:\n%s", n, content)
		}
		if has {
			buttoned++
		}
		if seen {
			if !strings.Contains(part, "Tool: **"+escape(bc.Tool, 2*core.MaxToolLen)+"**\n") {
				t.Errorf("call %d is shown but its tool is not shown whole:\n%s", n, part)
			}
			blocks := codeBlocks.FindAllStringSubmatch(part, -1)
			if len(blocks) != 1 {
				t.Errorf("call %d is shown with %d code blocks:\n%s", n, len(blocks), content)
				continue
			}
			adaptertest.CheckNamedCut(t, n, core.PrettyJSON(bc.Arguments), q.ID, strings.ReplaceAll(blocks[0][1], "`\u200b", "`"))
			continue
		}
		unseen++
		said := regexp.MustCompile(fmt.Sprintf(`\b%d\b[^\n]*askbridge show %s`, n, q.ID))
		if !said.MatchString(afterCalls(content)) {
			t.Errorf("call %d is not shown, and the card does not say how to see and answer it:\n%s", n, content)
		}
	}
	if unseen > 0 && labels[card.LabelApproveAll] {
		t.Errorf("%d calls are not shown, yet %q approves them:\n%s", unseen, card.LabelApproveAll, content)
	}
	if unseen == 0 && !labels[card.LabelApproveAll] {
		t.Errorf("every call is shown, yet no %q:\n%s", card.LabelApproveAll, content)
	}
	if buttoned < min(2, len(q.Calls)-len(q.Answers)) {
		t.Errorf("only %d calls have buttons:\n%s", buttoned, content)
	}
	return labels
}

// numbered is a call's button's label: its number first.
var numbered = regexp.MustCompile(`^\d+\. `)

// unbuttonedSaid are the calls (by number) a card's line names as shown
// without buttons of their own, if that line says how to decide them:
// with "Deny all" and askbridge show.
func unbuttonedSaid(content string) map[int]bool {
	said := map[int]bool{}
	for l := range strings.Lines(content) {
		if !unbuttonedHead.MatchString(l) || !strings.Contains(l, "**"+card.LabelDenyAll+"**") ||
			!strings.Contains(l, "`askbridge show ") {
			continue
		}
		for _, m := range numberRun.FindAllStringSubmatch(unbuttonedHead.FindStringSubmatch(l)[1], -1) {
			var from, to int
			fmt.Sscan(m[1], &from)
			to = from
			if m[2] != "" {
				fmt.Sscan(m[2], &to)
			}
			for n := from; n <= to; n++ {
				said[n] = true
			}
		}
	}
	return said
}

var (
	unbuttonedHead = regexp.MustCompile(`^ℹ️ Calls? ([\d–, and]+) ha(?:s|ve) no buttons of (?:its|their) own`)
	numberRun      = regexp.MustCompile(`(\d+)(?:–(\d+))?`)
)

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

// sameComponents reports whether two lists of components draw the same
// buttons.
func sameComponents(a, b []discordgo.MessageComponent) bool {
	ja, errA := discordgo.Marshal(a)
	jb, errB := discordgo.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
