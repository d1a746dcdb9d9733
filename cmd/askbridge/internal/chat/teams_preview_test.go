package chat

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams/teamspreview"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// teamsShot is the README's picture of an approval card on Teams.
const teamsShot = "../../../../adapters/teams/testdata/screenshots/approval-card.png"

// TestTeamsApprovalCard makes the README's picture of a Teams card: the
// real program posts an approval to teamsfake, and the Adaptive Card it
// sent is drawn by teamspreview (a preview of Teams' rendering, not
// Teams) in headless chromium and captured. With -update the picture is
// written; without, the drawn page is checked, and the picture must be
// there.
func TestTeamsApprovalCard(t *testing.T) {
	d := &teamsDriver{}
	d.Start(t, nil)
	q, err := d.main.Service.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "deploy-bot", RunID: "run-42", Route: "ops",
		Text: "May I drop the staging tables?", Reversibility: core.HardToReverse, Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE orders_old, carts_old","target":"staging"}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Card(t, q.ID, nil)
	m := d.message(t, c)
	page, err := teamspreview.Page(teamspreview.Message{Bot: "askbridge", At: time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC), Card: m.Card})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)

	tab := apptest.NewChrome(t).Tab(t, 720, 800, false)
	apptest.GoTo(t, tab, srv.URL)
	apptest.Until(t, tab, `document.fonts.status === "loaded"`)
	drawn := apptest.Eval[string](t, tab, `(function(){
		var out = [document.querySelector(".card").innerText];
		document.querySelectorAll("button.button").forEach(function(e){ out.push("button=" + e.textContent + "/" + e.dataset.style); });
		return out.join("\n");
	})()`)
	for _, want := range []string{card.HardToReverseMarker, `"sql": "DROP TABLE orders_old, carts_old"`, "button=" + card.LabelApprove + "/positive",
		"button=" + card.LabelDeny + "/destructive", "button=" + card.LabelDecline + "/"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the drawn card has no %q:\n%s", want, drawn)
		}
	}
	var card struct{ Version string }
	if err := json.Unmarshal(m.Card, &card); err != nil || card.Version != "1.5" {
		t.Errorf("posted card version %q: %v", card.Version, err)
	}
	if t.Failed() {
		return
	}
	keepShot(t, tab, teamsShot, "TestTeamsApprovalCard")
}
