package teamspreview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/core"
)

// TestDrawsEveryFixture: every card askbridge renders is drawn, people's
// text escaped, and each action a button with its style.
func TestDrawsEveryFixture(t *testing.T) {
	for _, f := range adaptertest.CardFixtures() {
		card := teams.Card(f.Card, true)
		if f.Card.As == core.DeliverRemind {
			card = teams.Reminder(f.Card)
		}
		raw, _ := json.Marshal(card)
		page, err := Page(Message{Bot: "askbridge", At: time.Unix(0, 0), Card: raw})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if strings.Contains(page, "<migration>") {
			t.Fatalf("%s: people's text is not escaped", f.Name)
		}
		if f.Name == "approval_editable" && (!strings.Contains(page, `data-style="positive">Approve</button>`) || !strings.Contains(page, "<textarea")) {
			t.Fatalf("%s: no Approve button or arguments input:\n%s", f.Name, page)
		}
	}
}

// TestRefusesWhatItCannotDraw: an element it does not know is an error,
// never a gap in the picture.
func TestRefusesWhatItCannotDraw(t *testing.T) {
	for _, card := range []string{
		`{"type":"AdaptiveCard","body":[{"type":"Image","url":"https://x/y.png"}]}`,
		`{"type":"AdaptiveCard","body":[{"type":"ActionSet","actions":[{"type":"Action.OpenUrl","title":"x","url":"https://x"}]}]}`,
		`{"type":"Hero"}`,
	} {
		if _, err := Page(Message{Card: json.RawMessage(card)}); err == nil {
			t.Errorf("%s drew", card)
		}
	}
}
