package discord

import (
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/adaptertest"
)

// TestLongCallShowsItsEnd: a call's arguments too long for the card keep
// their end (the pipe to a shell, the sandbox key after the command)
// and say how many characters were left out, counted right, and where to
// read the whole call, on an approval and on each call of a batch;
// before, the block showed only their start, cut with "…", and Approve
// approved what it hid. The steps hold backticks, which the code block
// breaks.
func TestLongCallShowsItsEnd(t *testing.T) {
	call := adaptertest.LongCall("./step.sh --at `date` *x* && ", 90)
	for name, q := range adaptertest.LongCallQuestions(approvalQ, call) {
		t.Run(name, func(t *testing.T) {
			m := post(q, false)
			checkLimits(t, q.ID, m.Content, m.Components)
			blocks := codeBlocks.FindAllStringSubmatch(m.Content, -1)
			if len(blocks) != max(len(q.Calls), 1) {
				t.Fatalf("%d code blocks in\n%s", len(blocks), m.Content)
			}
			for _, b := range blocks {
				adaptertest.CheckCutCall(t, call, q.ID, strings.ReplaceAll(b[1], "`\u200b", "`"))
			}
		})
	}
}

// codeBlocks are the code blocks of a message, their text inside.
var codeBlocks = regexp.MustCompile("(?s)```\n(.*?)\n```")
