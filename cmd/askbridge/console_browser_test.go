package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// The browser tests drive Debian's chromium, headless, against the real
// program. scripts/test (which .ci/run calls) installs chromium when it is missing.

var updateShots = flag.Bool("update", false, "rewrite the screenshots in adapters/console/testdata/screenshots/, adapters/slack/testdata/screenshots/ and adapters/teams/testdata/screenshots/")

const shotDir = "../../adapters/console/testdata/screenshots"

// waitBound bounds every wait on a page condition; waits end as soon as
// the condition holds.
const waitBound = 60 * time.Second

// chrome is one headless chromium; each tab gets its own browser
// context, so its own cookies, as a second person's browser would.
type chrome struct {
	alloc context.Context
}

func newChrome(t *testing.T) *chrome {
	t.Helper()
	path := "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; scripts/test does it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
	)
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	// Start the browser itself now, so tabs share it.
	root, cancelRoot := chromedp.NewContext(alloc)
	t.Cleanup(cancelRoot)
	if err := chromedp.Do(root, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &chrome{alloc: root}
}

// tab opens a page in a fresh browser context at the given size.
func (c *chrome) tab(t *testing.T, width, height int64, mobile bool) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(c.alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	// The first action opens the tab, and it lives as long as the context
	// given to that action: so not one with a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, opts...)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, waitBound)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// until waits for a JavaScript condition to hold on the page.
func until(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		c, cancel := context.WithDeadline(ctx, deadline)
		_, err := chromedp.Run(c, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		// A navigation while polling ends the page the poll ran in ("cannot
		// find context", "target navigated"); poll again in the new one.
		if time.Now().After(deadline) || ctx.Err() != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, body)
		}
	}
}

// submit clicks sel, which posts a form, and waits for the page it
// leads to; it returns that page's status.
func submit(t *testing.T, ctx context.Context, sel string) int64 {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, waitBound)
	defer cancel()
	resp, err := chromedp.RunResponse(c, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	return resp.Status
}

func goTo(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	do(t, ctx, chromedp.Navigate(url))
}

// signIn signs a tab in with a token and waits for the inbox, live.
func signIn(t *testing.T, ctx context.Context, base, token, name string) {
	t.Helper()
	goTo(t, ctx, base+"/")
	do(t, ctx, chromedp.SendKeys(chromedp.ID("token"), token))
	if status := submit(t, ctx, "#signin button"); status != http.StatusOK {
		t.Fatalf("sign in as %s: %d", name, status)
	}
	until(t, ctx, fmt.Sprintf(`document.querySelector(".top .who") !== null && document.querySelector(".top .who").textContent.includes(%q)`, name))
	waitLive(t, ctx)
}

func waitLive(t *testing.T, ctx context.Context) {
	t.Helper()
	until(t, ctx, `document.body.getAttribute("data-live") === "yes"`)
}

func card(id string) string { return "#card-" + id }

func waitCard(t *testing.T, ctx context.Context, id, state string) {
	t.Helper()
	until(t, ctx, fmt.Sprintf(`(function(){ var c = document.querySelector(%q); return c !== null && c.getAttribute("data-state") === %q; })()`, card(id), state))
}

func ask(t *testing.T, c *client.Client, req client.AskRequest) *client.AgentQuestion {
	t.Helper()
	if req.RunID == "" {
		req.RunID = "run-browser"
	}
	if req.Reversibility == "" {
		req.Reversibility = core.Reversible
	}
	q, err := c.Ask(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func getQ(t *testing.T, c *client.Client, id string) *client.Question {
	t.Helper()
	q, err := c.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestConsoleInABrowser(t *testing.T) {
	m := start(t, Settings{})
	agent := client.New(m.URL, agentA)
	ops := client.New(m.URL, opTok)
	br := newChrome(t)

	admin := br.tab(t, 1280, 900, false)
	signIn(t, admin, m.URL, m.AdminToken, "admin")
	// Marks the page, to prove later that nothing reloaded it.
	eval[bool](t, admin, `window.askbridgeMarker = true`)

	operator := br.tab(t, 1280, 900, false)
	signIn(t, operator, m.URL, opTok, "ops")

	t.Run("a question asked over the API appears without a reload", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Which region for the bucket?",
			Context: "Customers are mostly in the EU.", Labels: core.Labels{Project: "storage"}})
		waitCard(t, admin, q.ID, "open")
		waitCard(t, operator, q.ID, "open")
		if !eval[bool](t, admin, `window.askbridgeMarker === true`) {
			t.Fatal("the page reloaded")
		}
		openRow(t, admin, q.ID)
		text := eval[string](t, admin, `document.querySelector("`+card(q.ID)+`").innerText`)
		for _, want := range []string{"Which region for the bucket?", "Customers are mostly in the EU.", "storage", "agent-a", "run-browser", "default", "then deny"} {
			if !strings.Contains(text, want) {
				t.Errorf("the card lacks %q:\n%s", want, text)
			}
		}

		// The agent waits; answering here wakes it, and the operator's
		// page sees the card close live.
		woke := make(chan *client.WaitResponse, 1)
		go func() {
			res, err := agent.Wait(t.Context(), q.ID)
			if err != nil {
				t.Error(err)
			}
			woke <- res
		}()
		do(t, admin, chromedp.SendKeys(chromedp.ID("text-"+q.ID), "eu-west-1"))
		rec := answerInPlace(t, admin, q.ID, card(q.ID)+" form.answer button[type=submit]")
		if !strings.Contains(rec, "eu-west-1") || !strings.Contains(rec, "admin via console") {
			t.Fatalf("the response does not show what was recorded:\n%s", rec)
		}
		got := getQ(t, ops, q.ID)
		if got.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1" || got.Resolution.Decider.Surface != core.SurfaceConsole || got.Resolution.Decider.ID != "admin" {
			t.Fatalf("recorded: %+v", got.Resolution)
		}
		select {
		case res := <-woke:
			if res == nil || res.Resume == nil || !strings.Contains(res.Resume.Text, "eu-west-1") {
				t.Fatalf("the agent woke with %+v", res)
			}
		case <-time.After(waitBound):
			t.Fatal("the agent's wait did not return after the console's answer")
		}
		waitCard(t, operator, q.ID, "answered")
		if n := eval[int](t, operator, `document.querySelectorAll("`+card(q.ID)+` form").length`); n != 0 {
			t.Fatalf("the closed card still has %d forms", n)
		}
		if line := eval[string](t, operator, `document.querySelector("`+card(q.ID)+` .outcome-line").textContent`); !strings.Contains(line, "Answered by admin") {
			t.Fatalf("outcome: %q", line)
		}
	})

	t.Run("an answer from the CLI and the API closes the card in the open page", func(t *testing.T) {
		goTo(t, admin, m.URL+"/")
		waitLive(t, admin)
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Name the service?"})
		waitCard(t, admin, q.ID, "open")
		env := map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": opTok}
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"answer", q.ID, "--text", "atlas"}, func(k string) string { return env[k] }, nil, &out, &errOut); code != 0 {
			t.Fatalf("askbridge answer: %d %s", code, errOut.String())
		}
		waitCard(t, admin, q.ID, "answered")
		if line := eval[string](t, admin, `document.querySelector("`+card(q.ID)+` .outcome-line").textContent`); !strings.Contains(line, "Answered by ops") || !strings.Contains(line, "via api") {
			t.Fatalf("outcome: %q", line)
		}

		q2 := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Restart the cache?", Tool: "restart", Arguments: []byte(`{"svc":"cache"}`)})
		waitCard(t, admin, q2.ID, "open")
		if _, err := ops.Answer(t.Context(), q2.ID, client.AnswerRequest{ChosenOptionID: core.DenyOption}); err != nil {
			t.Fatal(err)
		}
		waitCard(t, admin, q2.ID, "answered")
	})

	t.Run("answer each kind", func(t *testing.T) {
		goTo(t, admin, m.URL+"/")
		waitLive(t, admin)
		dec := ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Which queue?", Reversibility: core.HardToReverse, Options: []core.Option{
			{ID: "kafka", Title: "Kafka", Writeup: "Durable and replayable; heavy to run.", Recommended: true},
			{ID: "sqs", Title: "SQS", Writeup: "Managed and light; no replay."},
		}})
		appr := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Run the migration?", Tool: "migrate",
			Arguments: []byte(`{"db":"billing","steps":[1,2]}`)})
		form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set-up", Items: []core.FormItem{
			{ID: "region", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU", Recommended: true}, {ID: "us", Label: "US"}}},
			{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "Small"}, {ID: "l", Label: "Large"}}},
		}})
		decl := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Anything to add?"})
		canc := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Obsolete?"})
		for _, id := range []string{dec.ID, appr.ID, form.ID, decl.ID, canc.ID} {
			waitCard(t, admin, id, "open")
		}
		// The hard-to-reverse decision is first, as the API lists it.
		if first := eval[string](t, admin, `document.querySelector("#inbox .card[data-state=open]").id`); first != "card-"+dec.ID {
			t.Fatalf("first open card is %s, want the hard-to-reverse decision", first)
		}

		// Decision: one button per option, recommended marked, and a note;
		// hard to reverse, so the choice is confirmed on a page of its own
		// first (the question's page answers without script's help).
		goTo(t, admin, m.URL+"/q/"+dec.ID)
		waitLive(t, admin)
		if rec := eval[string](t, admin, `document.querySelector("`+card(dec.ID)+` button[value=kafka]").innerText`); !strings.Contains(rec, "RECOMMENDED") || !strings.Contains(rec, "Durable and replayable") {
			t.Fatalf("the kafka button: %q", rec)
		}
		do(t, admin, chromedp.SendKeys(chromedp.ID("note-"+dec.ID), "lighter for now"))
		if status := submit(t, admin, card(dec.ID)+" button[value=sqs]"); status != http.StatusOK {
			t.Fatalf("decision: %d", status)
		}
		if got := getQ(t, ops, dec.ID); got.State != core.StateOpen {
			t.Fatalf("a hard-to-reverse choice was recorded before its confirmation: %s", got.State)
		}
		if c := eval[string](t, admin, `document.querySelector(".confirm-step").innerText`); !strings.Contains(c, "SQS") || !strings.Contains(c, "lighter for now") {
			t.Fatalf("the confirmation does not repeat the choice:\n%s", c)
		}
		if status := submit(t, admin, "button.confirm-yes"); status != http.StatusOK {
			t.Fatalf("confirm: %d", status)
		}
		if res := getQ(t, ops, dec.ID).Resolution; res.OptionID != "sqs" || res.Reason != "lighter for now" || res.Answer != "Managed and light; no replay." {
			t.Fatalf("decision recorded: %+v", res)
		}

		// Approval: pretty arguments and the digest; deny with a reason.
		goTo(t, admin, m.URL+"/q/"+appr.ID)
		waitLive(t, admin)
		args := eval[string](t, admin, `document.querySelector("`+card(appr.ID)+` pre.args").textContent`)
		if args != "{\n  \"db\": \"billing\",\n  \"steps\": [\n    1,\n    2\n  ]\n}" {
			t.Fatalf("arguments:\n%s", args)
		}
		if d := eval[string](t, admin, `document.querySelector("`+card(appr.ID)+` .digest").innerText`); !strings.Contains(d, appr.Call.ArgumentsSHA256) {
			t.Fatalf("digest: %q", d)
		}
		do(t, admin, chromedp.SendKeys(chromedp.ID("reason-"+appr.ID), "not during the sale"))
		if status := submit(t, admin, card(appr.ID)+" button.deny"); status != http.StatusOK {
			t.Fatalf("deny: %d", status)
		}
		if res := getQ(t, ops, appr.ID).Resolution; res.Approved == nil || *res.Approved || res.Reason != "not during the sale" || res.ArgumentsSHA256 != appr.Call.ArgumentsSHA256 {
			t.Fatalf("approval recorded: %+v", res)
		}
		if rec := eval[string](t, admin, `document.getElementById("recorded").innerText`); !strings.Contains(rec, "denied") || !strings.Contains(rec, appr.Call.ArgumentsSHA256) {
			t.Fatalf("the response: %s", rec)
		}

		// Form: the operator answers one item; the admin sees who, and
		// answers the other with free text.
		goTo(t, operator, m.URL+"/q/"+form.ID)
		waitLive(t, operator)
		do(t, operator, chromedp.Click(chromedp.CSS(card(form.ID)+` fieldset[data-item=region] input[value=eu]`)))
		if status := submit(t, operator, card(form.ID)+` fieldset[data-item=region] button.item-one`); status != http.StatusOK {
			t.Fatalf("form item: %d", status)
		}
		goTo(t, admin, m.URL+"/q/"+form.ID)
		waitLive(t, admin)
		until(t, admin, `document.querySelector("`+card(form.ID)+` li[data-item=region]").innerText.includes("answered by ops")`)
		if n := eval[int](t, admin, `document.querySelectorAll("`+card(form.ID)+` fieldset[data-item=region]").length`); n != 0 {
			t.Fatal("an answered item is offered again")
		}
		do(t, admin, chromedp.SendKeys(chromedp.ID("other-"+form.ID+"-size"), "medium"))
		if status := submit(t, admin, card(form.ID)+` fieldset[data-item=size] button.item-one`); status != http.StatusOK {
			t.Fatalf("form item 2: %d", status)
		}
		if got := getQ(t, ops, form.ID); got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].Text != "medium" {
			t.Fatalf("form recorded: %+v", got.Answers)
		}

		// Decline, and cancel (admins).
		goTo(t, admin, m.URL+"/q/"+decl.ID)
		waitLive(t, admin)
		if status := submit(t, admin, card(decl.ID)+` form.decline button`); status != http.StatusOK {
			t.Fatalf("decline: %d", status)
		}
		goTo(t, admin, m.URL+"/q/"+canc.ID)
		waitLive(t, admin)
		do(t, admin, chromedp.SendKeys(chromedp.CSS(card(canc.ID)+` form.cancel input[name=reason]`), "asked twice"))
		if status := submit(t, admin, card(canc.ID)+` form.cancel button`); status != http.StatusOK {
			t.Fatalf("cancel: %d", status)
		}
		if a, b := getQ(t, ops, decl.ID).State, getQ(t, ops, canc.ID); a != core.StateDeclined || b.State != core.StateCancelled || b.Resolution.Reason != "asked twice" {
			t.Fatalf("decline %s, cancel %s %q", a, b.State, b.Resolution.Reason)
		}
	})

	t.Run("a stale button tells the loser who won", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Raced?"})
		goTo(t, admin, m.URL+"/q/"+q.ID) // the question's own page
		waitLive(t, admin)
		// Keep a copy of the form as it was, as a page that missed the
		// change would hold it; the operator answers over the API; the
		// page closes the card live; then the stale copy is posted.
		eval[bool](t, admin, fmt.Sprintf(`(function(){ window.staleForm = document.querySelector(%q).cloneNode(true); return true; })()`, card(q.ID)+" form.answer"))
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "first"}); err != nil {
			t.Fatal(err)
		}
		waitCard(t, admin, q.ID, "answered")
		eval[bool](t, admin, `(function(){ var f = window.staleForm; f.querySelector("textarea").value = "second"; f.hidden = true; document.body.appendChild(f); f.submit(); return true; })()`)
		until(t, admin, `document.getElementById("problem") !== null`)
		// Core's one refusal note (the card's outcome line), and the card
		// below it shows what won.
		if p := eval[string](t, admin, `document.getElementById("problem").innerText`); !strings.Contains(p, "Already closed. Answered by ops on ") ||
			!strings.Contains(p, " via api. Your answer was not recorded.") {
			t.Fatalf("the loser reads %q", p)
		}
		if c := eval[string](t, admin, `document.querySelector("`+card(q.ID)+` .choice").innerText`); c != "first" {
			t.Fatalf("the loser's page shows %q as what won", c)
		}
		if got := getQ(t, ops, q.ID); got.Resolution.Answer != "first" {
			t.Fatalf("the loser changed the answer: %q", got.Resolution.Answer)
		}
	})

	t.Run("an observer has no controls", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Scale down?", Tool: "scale", Arguments: []byte(`{"n":1}`)})
		obs := br.tab(t, 1280, 900, false)
		signIn(t, obs, m.URL, obsTok, "dash")
		waitCard(t, obs, q.ID, "open")
		if n := eval[int](t, obs, `document.querySelectorAll("form[action*='/answer'], form[action*='/decline'], form[action*='/cancel'], button[name=option]").length`); n != 0 {
			t.Fatalf("the observer has %d controls", n)
		}
		if !strings.Contains(eval[string](t, obs, `document.querySelector("`+card(q.ID)+`").innerText`), "Scale down?") {
			t.Fatal("the observer does not see the question")
		}
	})

	t.Run("a forged cross-site post is refused", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Delete the backups?", Tool: "rm", Arguments: []byte(`{"path":"/backups"}`)})
		goTo(t, admin, m.URL+"/")
		waitCard(t, admin, q.ID, "open")
		// Even knowing the session's CSRF token, another origin's form is
		// refused: the browser says where the post came from.
		csrf := eval[string](t, admin, `document.querySelector("input[name=csrf]").value`)
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/q/%s/answer"><input type="hidden" name="csrf" value="%s">`+
				`<input type="hidden" name="option" value="approve"><button id="go" type="submit">win a prize</button></form>`, m.URL, q.ID, csrf)
		}))
		defer evil.Close()
		goTo(t, admin, evil.URL)
		if status := submit(t, admin, "#go"); status != http.StatusForbidden {
			t.Fatalf("the forged post got %d", status)
		}
		if got := getQ(t, ops, q.ID); got.State != core.StateOpen {
			t.Fatalf("the forged post changed the question: %s", got.State)
		}
		evs, err := ops.Events(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.QuestionID == q.ID && e.Kind != core.EventAsked {
				t.Fatalf("the forged post left an event: %+v", e)
			}
		}
	})

	t.Run("after a dropped connection the page catches up and never offers a stale card", func(t *testing.T) {
		px := newCutProxy(t, strings.TrimPrefix(m.URL, "http://"))
		tab := br.tab(t, 1280, 900, false)
		signIn(t, tab, px.url, opTok, "ops")
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Behind a flaky proxy?"})
		waitCard(t, tab, q.ID, "open")
		px.pause()
		until(t, tab, `document.body.getAttribute("data-live") === "no"`)
		if !eval[bool](t, tab, `document.querySelector("`+card(q.ID)+` fieldset").disabled && !document.getElementById("offline").hidden`) {
			t.Fatal("the card stays answerable while the page cannot hear changes")
		}
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "while you were cut off"}); err != nil {
			t.Fatal(err)
		}
		px.resume()
		waitCard(t, tab, q.ID, "answered")
		waitLive(t, tab)
	})

	t.Run("the layout at phone width", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Approve from a phone?", Tool: "deploy",
			Arguments: []byte(`{"service":"checkout","version":"2.14.0","regions":["eu-west-1","us-east-1"]}`)})
		phone := br.tab(t, 390, 844, true)
		signIn(t, phone, m.URL, opTok, "ops")
		waitCard(t, phone, q.ID, "open")
		openRow(t, phone, q.ID)
		fitsWidth(t, phone, "the inbox", 390)
		// The approve button is a full-width target.
		w := eval[float64](t, phone, `document.querySelector("`+card(q.ID)+` button.approve").getBoundingClientRect().width`)
		if inner := eval[float64](t, phone, `window.innerWidth`); w < inner*0.7 {
			t.Fatalf("the approve button is %.0fpx of %.0fpx", w, inner)
		}
		answerInPlace(t, phone, q.ID, card(q.ID)+" button.approve")
		if res := getQ(t, ops, q.ID).Resolution; res.Approved == nil || !*res.Approved {
			t.Fatalf("recorded: %+v", res)
		}
	})
}

// TestConsoleAtPhoneWidthWithLongWords: words with no place to break (a
// URL in a write-up, a path as a form option, a digest, a long question)
// wrap inside a 390px screen rather than widen the page, on every page.
func TestConsoleAtPhoneWidthWithLongWords(t *testing.T) {
	m := start(t, Settings{})
	agent := client.New(m.URL, agentA)
	ops := client.New(m.URL, opTok)
	br := newChrome(t)

	word := func(prefix string) string { return prefix + strings.Repeat("abcdefghij", 11) }
	url := "https://storage.example.com/" + word("buckets") + "/" + word("objects")
	path := "/srv/" + word("data")
	clar := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: word("Which") + "?", Context: "See " + url,
		Labels: core.Labels{Project: word("project"), Task: word("task")}})
	dec := ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Where should " + path + " go?", Options: []core.Option{
		{ID: "bucket", Title: word("Bucket"), Writeup: "Copy it to " + url + " as the runbook says.", Recommended: true},
		{ID: "disk", Title: "Disk", Writeup: "Keep it at " + path},
	}})
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set-up of " + url, Items: []core.FormItem{
		{ID: "dir", Question: "Which directory, " + path + " or the other?", Options: []core.FormOption{
			{ID: "long", Label: path, Description: url, Recommended: true}, {ID: "short", Label: "/srv"}}},
	}})
	appr := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Write " + path + "?", Tool: word("write_file"),
		Arguments: []byte(`{"path":"` + path + `","source":"` + url + `"}`)})
	// A standing approval for the long tool name fills /standing's table.
	if _, err := ops.Answer(t.Context(), appr.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: "see " + url,
		Standing: &core.StandingRequest{Scope: core.StandingRun, SameArguments: true}}); err != nil {
		t.Fatal(err)
	}

	phone := br.tab(t, 390, 844, true)
	signIn(t, phone, m.URL, opTok, "ops")
	for _, id := range []string{clar.ID, dec.ID, form.ID} {
		waitCard(t, phone, id, "open")
		openRow(t, phone, id)
	}
	fitsWidth(t, phone, "the inbox", 390)

	// The same cards as an observer sees them: options listed, not buttons.
	watcher := br.tab(t, 390, 844, true)
	signIn(t, watcher, m.URL, obsTok, "dash")
	waitCard(t, watcher, dec.ID, "open")
	openRow(t, watcher, dec.ID)
	fitsWidth(t, watcher, "the observer's inbox", 390)

	goTo(t, phone, m.URL+"/q/"+appr.ID)
	until(t, phone, `document.querySelector(".history tbody tr") !== null && document.querySelector(".resume") !== null`)
	fitsWidth(t, phone, "a question's history", 390)

	goTo(t, phone, m.URL+"/standing")
	until(t, phone, `document.querySelector(".standing-row") !== null`)
	fitsWidth(t, phone, "/standing", 390)
}

// TestConsolePassesAxe runs axe-core over the sign-in page, an inbox with
// cards of every kind (open, closed, recommended options, a hard-to-reverse
// marker), a question's history and /standing.
func TestConsolePassesAxe(t *testing.T) {
	loadAxe(t)
	m := start(t, Settings{})
	agent := client.New(m.URL, agentA)
	ops := client.New(m.URL, opTok)
	br := newChrome(t)

	// Its standing approval would approve later asks for its tool at once,
	// so no card below asks for that tool.
	granted := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Rotate the logs?", Tool: "rotate_logs",
		Arguments: []byte(`{"keep":7}`)})
	if _, err := ops.Answer(t.Context(), granted.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: "fine",
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	open := []*client.AgentQuestion{
		ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Which queue?", Reversibility: core.HardToReverse,
			Context: "Peak load is 2k orders a minute.", Labels: core.Labels{Project: "orders"}, Options: []core.Option{
				{ID: "kafka", Title: "Kafka", Writeup: "Durable and replayable.", Recommended: true},
				{ID: "sqs", Title: "SQS", Writeup: "Managed; no replay."},
			}}),
		ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Run the migration?", Reversibility: core.HardToReverse,
			Tool: "migrate", Arguments: []byte(`{"db":"billing"}`)}),
		ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Edit the config?", Tool: "write_file",
			Arguments: []byte(`{"path":"/etc/app.conf","content":"x"}`), Editable: &core.Editable{Keys: []string{"content"}}}),
		ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply two writes?", Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
			{ToolCallID: "toolu_2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)},
		}}),
		ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up staging", Items: []core.FormItem{
			{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1", Description: "closest", Recommended: true}, {ID: "us", Label: "us-east-1"}}},
			{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium"}}},
		}}),
	}
	closing := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "What should the flag be called?"})
	open = append(open, closing)
	if _, err := ops.Answer(t.Context(), open[4].ID, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "region", OptionID: "eu"}}}); err != nil {
		t.Fatal(err)
	}

	tab := br.tab(t, 1280, 900, false)
	goTo(t, tab, m.URL+"/")
	until(t, tab, `document.getElementById("signin") !== null`)
	audit(t, tab, "the sign-in page")

	signIn(t, tab, m.URL, m.AdminToken, "admin")
	for _, q := range open {
		waitCard(t, tab, q.ID, "open")
	}
	// A card that closes while the page is open, as the page redraws it.
	if _, err := ops.Answer(t.Context(), closing.ID, client.AnswerRequest{Answer: "--no-color"}); err != nil {
		t.Fatal(err)
	}
	waitCard(t, tab, closing.ID, "answered")
	audit(t, tab, "the inbox")
	for _, q := range open {
		openRow(t, tab, q.ID)
	}
	audit(t, tab, "the inbox with every row open")
	// A hard-to-reverse choice waiting for its confirmation, in its row.
	do(t, tab, chromedp.Click(chromedp.CSS(card(open[0].ID)+" button[value=sqs]")))
	until(t, tab, `document.querySelector("`+card(open[0].ID)+` .confirm-step") !== null`)
	audit(t, tab, "the inbox confirming a choice")

	goTo(t, tab, m.URL+"/q/"+granted.ID)
	until(t, tab, `document.querySelector(".history tbody tr") !== null && document.querySelector(".resume") !== null`)
	waitLive(t, tab)
	audit(t, tab, "a question's history")

	goTo(t, tab, m.URL+"/standing")
	until(t, tab, `document.querySelector(".standing-row") !== null`)
	audit(t, tab, "/standing")
}

// TestConsoleApprovalsInABrowser edits an approval's arguments before
// approving it, and decides a batch one call at a time, then all at once,
// in a real browser against the real program.
func TestConsoleApprovalsInABrowser(t *testing.T) {
	m := start(t, Settings{})
	agent := client.New(m.URL, agentA)
	ops := client.New(m.URL, opTok)
	br := newChrome(t)

	operator := br.tab(t, 1280, 900, false)
	signIn(t, operator, m.URL, opTok, "ops")
	admin := br.tab(t, 1280, 900, false)
	signIn(t, admin, m.URL, m.AdminToken, "admin")

	t.Run("edit and approve", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Write the report?", Tool: "write_file",
			Arguments: []byte(`{"path":"/srv/report.txt","content":"hello"}`), Editable: &core.Editable{Keys: []string{"path"}}})
		goTo(t, operator, m.URL+"/q/"+q.ID)
		waitLive(t, operator)
		waitCard(t, operator, q.ID, "open")
		editor := "#args-" + q.ID
		if v := eval[string](t, operator, `document.querySelector("`+editor+`").value`); v != "{\n  \"content\": \"hello\",\n  \"path\": \"/srv/report.txt\"\n}" {
			t.Fatalf("the editor starts with %q", v)
		}

		// A key that may not change is refused with core's words.
		do(t, operator, chromedp.Click(chromedp.CSS(card(q.ID)+" details.edit summary")), chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), `{"path":"/srv/report.txt","content":"bye"}`))
		if status := submit(t, operator, card(q.ID)+" form.edit-form button.edit-approve"); status != http.StatusBadRequest {
			t.Fatalf("a non-editable key: %d", status)
		}
		if p := eval[string](t, operator, `document.getElementById("problem").innerText`); !strings.Contains(p, `argument "content" may not be changed`) {
			t.Fatalf("the refusal: %q", p)
		}
		if got := getQ(t, ops, q.ID); got.State != core.StateOpen {
			t.Fatalf("a refused edit changed the question: %s", got.State)
		}

		goTo(t, operator, m.URL+"/q/"+q.ID)
		waitLive(t, operator)
		do(t, operator, chromedp.Click(chromedp.CSS(card(q.ID)+" details.edit summary")), chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), `{"path":"/srv/report-v2.txt","content":"hello"}`))
		if status := submit(t, operator, card(q.ID)+" form.edit-form button.edit-approve"); status != http.StatusOK {
			t.Fatalf("edit and approve: %d", status)
		}
		res := getQ(t, ops, q.ID).Resolution
		if res == nil || res.Approved == nil || !*res.Approved || res.Edit == nil || string(res.Edit.Arguments) != `{"content":"hello","path":"/srv/report-v2.txt"}` {
			t.Fatalf("recorded: %+v", res)
		}
		if text := eval[string](t, operator, `document.querySelector("`+card(q.ID)+`").innerText`); !strings.Contains(text, "Approved with changes: path changed") {
			t.Fatalf("the closed card:\n%s", text)
		}
		// The other page closes the card live, with the change.
		waitCard(t, admin, q.ID, "answered")
		if text := eval[string](t, admin, `document.querySelector("`+card(q.ID)+`").textContent`); !strings.Contains(text, "Approved with changes: path changed") {
			t.Fatalf("the admin's card:\n%s", text)
		}
	})

	t.Run("approve one call of a batch, then approve all", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply three writes?", Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
			{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`)},
			{ToolCallID: "toolu_3", Tool: "chmod", Arguments: []byte(`{"path":"/c"}`)},
		}})
		woke := make(chan *client.WaitResponse, 1)
		go func() {
			res, err := agent.Wait(t.Context(), q.ID)
			if err != nil {
				t.Error(err)
			}
			woke <- res
		}()
		goTo(t, operator, m.URL+"/q/"+q.ID)
		waitLive(t, operator)
		waitCard(t, admin, q.ID, "open")
		if n := eval[int](t, operator, `document.querySelectorAll("`+card(q.ID)+` li.batch-call").length`); n != 3 {
			t.Fatalf("the card lists %d calls", n)
		}
		if status := submit(t, operator, card(q.ID)+` form.call-form[data-call=toolu_2] button.approve`); status != http.StatusOK {
			t.Fatalf("approve one call: %d", status)
		}
		// The admin's page shows the decision live, with who made it.
		until(t, admin, `(function(){ var c = document.querySelector("`+card(q.ID)+` li[data-call=toolu_2].decided"); return c !== null && c.textContent.includes("by ops via console"); })()`)
		if eval[bool](t, admin, `document.querySelector("`+card(q.ID)+` form.call-form[data-call=toolu_2]") !== null`) {
			t.Fatal("a decided call still offers its buttons")
		}
		if got := getQ(t, ops, q.ID); got.State != core.StateOpen || len(got.Answers) != 1 {
			t.Fatalf("after one call: %s %d", got.State, len(got.Answers))
		}
		goTo(t, admin, m.URL+"/q/"+q.ID)
		waitLive(t, admin)
		if status := submit(t, admin, card(q.ID)+" button.approve-all"); status != http.StatusOK {
			t.Fatalf("approve all: %d", status)
		}
		got := getQ(t, ops, q.ID)
		if got.State != core.StateAnswered {
			t.Fatalf("after approve all: %s", got.State)
		}
		want := map[string]string{"toolu_1": "admin", "toolu_2": "ops", "toolu_3": "admin"}
		for _, c := range got.Calls {
			var d *core.ItemAnswer
			for i := range got.Answers {
				if got.Answers[i].ItemID == c.ToolCallID {
					d = &got.Answers[i]
				}
			}
			if d == nil || d.OptionID != core.ApproveOption || d.Decider.ID != want[c.ToolCallID] {
				t.Fatalf("%s: %+v", c.ToolCallID, d)
			}
		}
		res := <-woke
		if res == nil || len(res.Calls) != 3 || res.Calls[0].ToolCallID != "toolu_1" || res.Calls[2].ToolCallID != "toolu_3" {
			t.Fatalf("the agent's per-call results: %+v", res)
		}
	})
}

// TestConsoleKeepsDrafts: when someone else acts on a question, the card
// open in another page is drawn again, and what its reader had typed but
// not sent, the fold they opened and their caret stay as they were.
func TestConsoleKeepsDrafts(t *testing.T) {
	m := start(t, Settings{})
	agent := client.New(m.URL, agentA)
	ops := client.New(m.URL, opTok)
	br := newChrome(t)
	operator := br.tab(t, 1280, 900, false)
	signIn(t, operator, m.URL, opTok, "ops")

	q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply two writes?", Calls: []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`), Editable: &core.Editable{All: true}},
	}})
	goTo(t, operator, m.URL+"/q/"+q.ID)
	waitLive(t, operator)
	waitCard(t, operator, q.ID, "open")
	reason, editor := "#reason-"+q.ID+"-toolu_2", "#args-"+q.ID+"-toolu_2"
	do(t, operator, chromedp.Click(chromedp.CSS(card(q.ID)+" form.call-form[data-call=toolu_2] ~ details.edit summary")),
		chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), `{"path":"/b2"}`),
		chromedp.SendKeys(chromedp.CSS(reason), "checked with the owner"))
	// Someone else decides the other call: the operator's card changes.
	if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: "toolu_1", OptionID: core.ApproveOption}}}); err != nil {
		t.Fatal(err)
	}
	until(t, operator, `document.querySelector("`+card(q.ID)+` li[data-call=toolu_1].decided") !== null`)
	if v := eval[string](t, operator, `document.querySelector("`+reason+`").value`); v != "checked with the owner" {
		t.Errorf("the half-typed reason became %q", v)
	}
	if v := eval[string](t, operator, `document.querySelector("`+editor+`").value`); v != `{"path":"/b2"}` {
		t.Errorf("the edited arguments became %q", v)
	}
	if !eval[bool](t, operator, `document.querySelector("`+editor+`").closest("details").open`) {
		t.Error("the opened editor folded shut")
	}
	if id := eval[string](t, operator, `document.activeElement ? document.activeElement.id : ""`); id != strings.TrimPrefix(reason, "#") {
		t.Errorf("the caret moved to %q", id)
	}
	// The draft is still the reader's to send.
	if status := submit(t, operator, card(q.ID)+" form.call-form[data-call=toolu_2] button.approve"); status != http.StatusOK {
		t.Fatalf("approve the second call: %d", status)
	}
	got := getQ(t, ops, q.ID)
	if got.State != core.StateAnswered {
		t.Fatalf("after both calls: %s", got.State)
	}
	for _, co := range core.CallOutcomes(&core.Question{Calls: got.Calls, Answers: got.Answers}) {
		if co.Call.ToolCallID == "toolu_2" && (co.Decision == nil || co.Decision.Text != "checked with the owner") {
			t.Errorf("the second call's decision: %+v", co.Decision)
		}
	}
}

// cutProxy forwards TCP to the program and can cut every connection and
// refuse new ones, as a dropped network would, until resumed.
type cutProxy struct {
	url    string
	target string
	mu     sync.Mutex
	paused bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{url: "http://" + ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		ln.Close()
		p.pause()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.paused {
		p.mu.Unlock()
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

func (p *cutProxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *cutProxy) resume() {
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}
