package card_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// A renderer turns a card into its platform's markup: the heading and
// markers first, then each section with its own buttons, then the card's
// buttons. Here the card of an approval posted to an escalation room.
func ExampleNew() {
	at := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	q := &core.Question{ID: "b234567abcdefghij", Kind: core.KindApproval, Agent: "deploy-bot", RunID: "run-1",
		Text: "May I drop the staging tables?", Reversibility: core.HardToReverse, State: core.StateOpen,
		CreatedAt: at, Deadline: at.Add(time.Hour),
		Call: &core.ToolCall{Tool: "sql.exec", Arguments: json.RawMessage(`{"sql":"DROP TABLE a"}`),
			ArgumentsSHA256: "3f2a9c1b7d5e4f60a1b2c3d4e5f60718293a4b5c6d7e8f9012345678abcdef01"}}
	c := card.New(q, core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1.1", Kind: core.DeliverEscalate})

	fmt.Println(c.Heading)
	for _, m := range c.Markers {
		fmt.Println("marker:", m.Text())
	}
	for _, s := range c.Sections {
		fmt.Printf("%s %s sha256 %s…\n", s.Kind, s.Title, s.Hash)
		for _, a := range s.Actions {
			fmt.Printf("  [%s] %s %s\n", a.Label, a.Style, a.Ref.Encode())
		}
	}
	for _, a := range c.Actions {
		fmt.Printf("[%s] %s %s\n", a.Label, a.Style, a.Ref.Encode())
	}
	// Output:
	// Approval needed
	// marker: HARD TO REVERSE
	// marker: Escalated: nobody answered in time
	// call sql.exec sha256 3f2a9c1b7d5e…
	//   [Approve] primary 1a-0b234567abcdefghij
	//   [Deny] danger 1d-0b234567abcdefghij
	// [Decline: let the agent decide] default 1x-0b234567abcdefghij
}
