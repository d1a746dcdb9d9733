package teams

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestLongCallShowsItsEnd: a call's arguments too long for the card keep
// their end (the pipe to a shell, the sandbox key after the command) and
// say how many characters were left out, counted right, and where to
// read the whole call, on an approval and on each call of a batch, the
// card valid and within its size; before, the card showed only their
// start, cut with "…", and Approve approved what it hid.
func TestLongCallShowsItsEnd(t *testing.T) {
	s := cardSchema(t)
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	approval := func() *core.Question {
		return &core.Question{ID: "b234567abcdefghij", Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "May I run it?",
			Reversibility: core.HardToReverse, Route: "ops", CreatedAt: t0, Deadline: t0.Add(time.Hour), State: core.StateOpen}
	}
	call := adaptertest.LongCall("./step.sh <in >out [x](y) && ", 150)
	for name, q := range adaptertest.LongCallQuestions(approval, call) {
		t.Run(name, func(t *testing.T) {
			c := Card(card.New(q, core.MessageRef{Surface: core.SurfaceTeams, Room: "r", Kind: core.DeliverPost}), true)
			if n := Size(c); n > MaxCardBytes {
				t.Fatalf("%d bytes, over %d", n, MaxCardBytes)
			}
			checkCard(t, s, c)
			args := arguments(c)
			if len(args) != max(len(q.Calls), 1) {
				t.Fatalf("%d argument blocks", len(args))
			}
			for _, shown := range args {
				adaptertest.CheckCutCall(t, call, q.ID, shown)
				if n := utf8.RuneCountInString(shown); n > budgetArgs {
					t.Errorf("the arguments take %d runes of their %d", n, budgetArgs)
				}
			}
		})
	}
}

// arguments are the texts of c's calls' arguments: each the run after
// the words "Arguments".
func arguments(c AdaptiveCard) []string {
	var out []string
	for i, e := range c.Body[:len(c.Body)-1] {
		if e["type"] != "TextBlock" || e["text"] != "Arguments" {
			continue
		}
		if runs, _ := c.Body[i+1]["inlines"].([]Element); len(runs) == 1 {
			out = append(out, runs[0]["text"].(string))
		}
	}
	return out
}
