package console

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// A row the stream draws again while its own answer is on the way (the
// server records a batch's calls one by one, and each is an event) waits
// for the answer's response: drawn at once, the copy lacks the calls being
// answered, and the reason being sent with them came back as a draft
// "someone else" cut off. The answer's response is held in the browser
// Until the stream's redraw has been fetched, so the race is certain.
func TestConsoleRedrawWaitsForTheRowsAnswer(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	br := apptest.NewChrome(t)
	batch := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply two writes?", Calls: []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)},
	}})
	admin := br.Tab(t, 1280, 900, false)
	signIn(t, admin, m.URL, m.AdminToken, "admin")
	waitCard(t, admin, batch.ID, "open")
	openRow(t, admin, batch.ID)
	apptest.Do(t, admin, chromedp.Click(chromedp.CSS(cardSel(batch.ID)+" details.batch-each-fold summary")),
		chromedp.Click(chromedp.CSS(cardSel(batch.ID)+` fieldset[data-call=toolu_1] input[value=approve]`)),
		chromedp.Click(chromedp.CSS(cardSel(batch.ID)+` fieldset[data-call=toolu_2] input[value=deny]`)),
		chromedp.SendKeys(chromedp.ID("each-reason-"+batch.ID+"-toolu_2"), "not the permissions"))

	// Hold the answer's response (only the answer's: the redraw's fetch
	// goes through).
	paused := make(chan fetch.RequestID, 1)
	var target *chromedp.Target
	apptest.Do(t, admin, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		target = tg
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
			{URLPattern: "*/q/" + string(batch.ID) + "/answer", RequestStage: fetch.RequestStageResponse}}})
		return err
	}))
	events, stop := context.WithCancel(admin)
	defer stop()
	go func() {
		for ev, err := range cdp.Events(events, target, fetch.RequestPaused) {
			if err != nil {
				return
			}
			paused <- ev.RequestID
			return
		}
	}()
	apptest.Do(t, admin, chromedp.Click(chromedp.CSS(cardSel(batch.ID)+" button.send-calls")))
	var held fetch.RequestID
	select {
	case held = <-paused:
	case <-admin.Done():
		t.Fatal("the answer was never sent")
	}
	// Both calls are recorded, so the question closed and the stream has
	// said so: the row is drawn again (or, as it should, marked to be).
	apptest.Until(t, admin, `document.querySelector("`+cardSel(batch.ID)+`[data-stale]") !== null || document.querySelector("`+cardSel(batch.ID)+` .draft-box") !== null`)
	if _, err := cdp.Call(admin, target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: held}); err != nil {
		t.Fatal(err)
	}
	apptest.Until(t, admin, `document.querySelector("`+cardSel(batch.ID)+` .recorded-box") !== null`)
	if apptest.Eval[bool](t, admin, `document.querySelector("`+cardSel(batch.ID)+` .draft-box") !== null`) {
		t.Fatal("the reason just sent is shown as an unsent draft")
	}
	waitCard(t, admin, batch.ID, "answered")
}
