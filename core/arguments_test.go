package core_test

import (
	"encoding/json"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestArgumentsWithAKeyTwiceAreRefused: arguments that give a key twice,
// or hold text that is not UTF-8, are refused at the ask, on every door;
// before, core kept the last of two keys (what the card, the digest and
// the rules saw) while a tool keeping the first would run the other.
func TestArgumentsWithAKeyTwiceAreRefused(t *testing.T) {
	svc, _ := coretest.Open(t, coretest.Options{})
	for _, args := range []string{`{"command":"rm -rf ~","command":"ls"}`, `{"a":{"b":1,"b":2}}`, "{\"path\":\"\xff\"}"} {
		_, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Text: "Run?",
			Reversibility: core.Reversible, Tool: "shell", Arguments: json.RawMessage(args)})
		if core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("%q: %v, want invalid", args, err)
		}
	}
	if open, _, err := svc.ListOpen(t.Context(), "", 10); err != nil || len(open) != 0 {
		t.Errorf("refused asks parked %d questions, %v", len(open), err)
	}
}
