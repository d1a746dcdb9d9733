package ntfy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestRefusedTapIsToldByNotification: the ntfy app shows only "HTTP 409"
// for an http button whose request was refused, never the page it got
// back, so a lock-screen tap that recorded nothing is told why in a
// notification of its own on the same topic. A browser, shown the page,
// gets no such notification, nor does a tap that counted. Before, the
// tapper of a closed question saw "HTTP 409" and nothing else.
func TestRefusedTapIsToldByNotification(t *testing.T) {
	e := newEnv(t, token)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the staging table?", Tool: "sql.exec",
		Arguments: []byte(`{"sql":"DROP TABLE t"}`)})
	m := e.notification(1)
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops"}, OptionID: core.DenyOption}); err != nil {
		t.Fatal(err)
	}

	// From a browser (the page is what it shows): no notification.
	var approve ntfyfake.Action
	for _, a := range m.Actions {
		if a.Label == card.LabelApprove {
			approve = a
		}
	}
	req, _ := http.NewRequest(http.MethodPost, approve.URL, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusConflict || len(e.fake.Messages(topic)) != 1 {
		t.Fatalf("a browser's late approve: %d, %d notifications", res.StatusCode, len(e.fake.Messages(topic)))
	}

	// From the app: told in a notification.
	if status, _ := ntfyfake.Tap(t, m, card.LabelApprove); status != http.StatusConflict {
		t.Fatalf("the app's late approve: %d", status)
	}
	ms := e.fake.Messages(topic)
	if len(ms) != 2 {
		t.Fatalf("%d notifications after the app's refused tap, want 2", len(ms))
	}
	note := ms[1]
	if len(note.Actions) != 0 || !strings.Contains(note.Message, "Already closed") || !strings.Contains(note.Message, "Denied") ||
		!strings.Contains(note.Message, "Drop the staging table?") || !strings.Contains(note.Title, "Not recorded") {
		t.Fatalf("the tapper was told %q: %q", note.Title, note.Message)
	}
}

// TestTapThatCountsPublishesNothingMore: a tap that counted is told by
// the app itself (the notification clears), so nothing more is published.
func TestTapThatCountsPublishesNothingMore(t *testing.T) {
	e := newEnv(t, token)
	e.deliver()
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Run it?", Tool: "sh", Arguments: []byte(`{"cmd":"ls"}`)})
	m := e.notification(1)
	if status, _ := ntfyfake.Tap(t, m, card.LabelApprove); status != http.StatusOK {
		t.Fatalf("tap: %d", status)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered {
		t.Fatalf("state %s", got.State)
	}
	// A refusal's notification is published before the tap is answered.
	if ms := e.fake.Messages(topic); len(ms) != 1 {
		t.Fatalf("published after a tap that counted: %+v", ms)
	}
}
