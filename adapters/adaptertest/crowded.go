package adaptertest

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// Batch is a batch of the most calls core takes, made from a fresh
// base() (a driver's approval, whose call is replaced) under text: each
// call is call, its tool named tool(i), its id toolu_01 on.
func Batch(base func() *core.Question, call core.ToolCall, text string, tool func(i int) string) *core.Question {
	q := base()
	q.Call, q.Text = nil, text
	for i := range core.MaxBatchCalls {
		c := call
		c.Tool = tool(i)
		q.Calls = append(q.Calls, core.BatchCall{ToolCallID: fmt.Sprintf("toolu_%02d", i+1), ToolCall: c})
	}
	return q
}

// LongTool is the name of call i of a batch at core's longest, the names
// differing only in their first characters.
func LongTool(i int) string {
	return fmt.Sprintf("t%02d_", i+1) + strings.Repeat("mcp__github__", (core.MaxToolLen-4)/13)
}

// CrowdedBatches are batches of the most calls core takes, each made
// from a fresh base() (a driver's approval, whose call is replaced), by
// name: each call's arguments too long for any card (LongCall), under a
// question of a few paragraphs or of the most core takes, with tools
// named at core's longest (differing only in their first characters),
// with some calls decided in the console at at, or with every button a
// call can have. No chat message gives every call a cut of its arguments
// that names askbridge show, so a renderer must choose what to leave off
// (card.Unseen).
func CrowdedBatches(base func() *core.Question, at time.Time) map[string]*core.Question {
	call := LongCall("./step.sh <in >out @ops && ", 90)
	batch := func(text string, tool func(i int) string) *core.Question { return Batch(base, call, text, tool) }
	decide := func(q *core.Question, calls ...int) *core.Question {
		for _, i := range calls {
			q.Answers = append(q.Answers, core.ItemAnswer{ItemID: q.Calls[i].ToolCallID, OptionID: core.ApproveOption,
				Decider: core.Decider{Surface: core.SurfaceConsole, ID: "ops", Name: "Ops"}, At: at})
		}
		return q
	}
	bash := func(int) string { return "Bash" }
	longTool := LongTool
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

// CheckNamedCut checks shown, what a card of question id shows of call
// n's arguments body (the platform's escaping undone): the whole, or a
// start and an end of body around a line that counts the characters left
// out right and names askbridge show id (card.CutMiddle's long line).
func CheckNamedCut(t testing.TB, n int, body string, id core.QuestionID, shown string) {
	t.Helper()
	if shown == body {
		return
	}
	line := "; the whole call: " + card.ShowCommand(id) + " …\n"
	at := strings.Index(shown, line)
	start := strings.LastIndex(shown[:max(at, 0)], "\n… ")
	if at < 0 || start < 0 {
		t.Errorf("call %d: no line names %s:\n%s", n, card.ShowCommand(id), shown)
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
