package console

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// holder holds a tab's requests to one URL pattern before they are sent,
// and hands each to the test, which lets it go on, or fails it, when the
// moment it tests has come.
type holder struct {
	target *chromedp.Target
	held   chan fetch.RequestID
}

func holdRequests(t *testing.T, tab context.Context, pattern string) *holder {
	t.Helper()
	h := &holder{held: make(chan fetch.RequestID, 8)}
	apptest.Do(t, tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		h.target = tg
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
			{URLPattern: pattern, RequestStage: fetch.RequestStageRequest}}})
		return err
	}))
	events, stop := context.WithCancel(tab)
	t.Cleanup(stop)
	go func() {
		for ev, err := range cdp.Events(events, h.target, fetch.RequestPaused) {
			if err != nil {
				return
			}
			select {
			case h.held <- ev.RequestID:
			case <-events.Done():
				return
			}
		}
	}()
	return h
}

// next waits for the next request held.
func (h *holder) next(t *testing.T, tab context.Context) fetch.RequestID {
	t.Helper()
	c, cancel := context.WithTimeout(tab, apptest.WaitBound)
	defer cancel()
	select {
	case id := <-h.held:
		return id
	case <-c.Done():
		t.Fatal("no request was made")
		return ""
	}
}

func (h *holder) release(t *testing.T, tab context.Context, id fetch.RequestID) {
	t.Helper()
	if _, err := cdp.Call(tab, h.target, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}); err != nil {
		t.Fatal(err)
	}
}

// stop lets every later request through.
func (h *holder) stop(t *testing.T, tab context.Context) {
	t.Helper()
	if _, err := cdp.Call(tab, h.target, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
}

func (h *holder) fail(t *testing.T, tab context.Context, id fetch.RequestID) {
	t.Helper()
	if _, err := cdp.Call(tab, h.target, fetch.FailRequest, fetch.FailRequestParams{RequestID: id, ErrorReason: network.ErrorReasonConnectionReset}); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleCatchingUpKeepsBusyRowsHeld: when the stream catches up
// after a drop, the page is live again, but a row whose answer is still
// on its way, or whose fresh copy failed to arrive and is being fetched
// again, is no more answerable than it was: its controls stay disabled
// until its answer comes back or its fresh copy is drawn.
func TestConsoleCatchingUpKeepsBusyRowsHeld(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	px := newCutProxy(t, strings.TrimPrefix(m.URL, "http://"))
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, px.url, apptest.OpTok, "ops")
	// reconnect drops the stream and lets it catch up again.
	reconnect := func() {
		t.Helper()
		px.pause()
		apptest.Until(t, tab, `document.body.getAttribute("data-live") === "no"`)
		px.resume()
		waitLive(t, tab)
	}
	held := func(id core.QuestionID) bool {
		return apptest.Eval[bool](t, tab, `Array.prototype.every.call(document.querySelectorAll("`+cardSel(id)+` fieldset"), function (f) { return f.disabled; })`)
	}

	t.Run("an answer on its way", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Which bucket?"})
		waitCard(t, tab, q.ID, "open")
		openRow(t, tab, q.ID)
		h := holdRequests(t, tab, "*/q/"+string(q.ID)+"/answer")
		apptest.Do(t, tab, chromedp.SendKeys(chromedp.ID("text-"+q.ID), "logs-eu"))
		apptest.Click(t, tab, cardSel(q.ID)+" form.answer button[type=submit]")
		req := h.next(t, tab)
		apptest.Until(t, tab, `document.querySelector("`+cardSel(q.ID)+`").getAttribute("aria-busy") === "true"`)
		reconnect()
		if !held(q.ID) {
			t.Fatal("catching up made a row answerable while its answer is on its way")
		}
		h.release(t, tab, req)
		h.stop(t, tab)
		apptest.Until(t, tab, `document.querySelector("`+cardSel(q.ID)+` .recorded-box") !== null`)
		if got := getQ(t, ops, q.ID); got.State != core.StateAnswered || got.Resolution.Answer != "logs-eu" {
			t.Fatalf("recorded: %s %+v", got.State, got.Resolution)
		}
	})

	t.Run("a row being fetched again", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply two writes?", Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
			{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`)},
		}})
		waitCard(t, tab, q.ID, "open")
		openRow(t, tab, q.ID)
		h := holdRequests(t, tab, "*/rows/"+string(q.ID)+"*")
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: "toolu_1", OptionID: core.ApproveOption}}}); err != nil {
			t.Fatal(err)
		}
		// The fresh copy fails to arrive: the row is held, and fetched again.
		h.fail(t, tab, h.next(t, tab))
		retry := h.next(t, tab)
		if !held(q.ID) {
			t.Fatal("a row whose fresh copy failed stays answerable")
		}
		reconnect()
		if !held(q.ID) {
			t.Fatal("catching up made a row answerable before its fresh copy was drawn")
		}
		h.release(t, tab, retry)
		h.stop(t, tab)
		apptest.Until(t, tab, `document.querySelector("`+cardSel(q.ID)+` li[data-call=toolu_1].decided") !== null`)
		apptest.Until(t, tab, `!document.querySelector("`+cardSel(q.ID)+` form.call-form fieldset").disabled`)
	})
}
