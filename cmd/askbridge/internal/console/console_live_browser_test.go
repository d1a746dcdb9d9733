package console

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

func TestConsoleInABrowser(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	admin := br.Tab(t, 1280, 900, false)
	signIn(t, admin, m.URL, m.AdminToken, "admin")
	// Marks the page, to prove later that nothing reloaded it.
	apptest.Eval[bool](t, admin, `window.askbridgeMarker = true`)

	operator := br.Tab(t, 1280, 900, false)
	signIn(t, operator, m.URL, apptest.OpTok, "ops")

	t.Run("a question asked over the API appears without a reload", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Which region for the bucket?",
			Context: "Customers are mostly in the EU.", Labels: core.Labels{Project: "storage"}})
		waitCard(t, admin, q.ID, "open")
		waitCard(t, operator, q.ID, "open")
		if !apptest.Eval[bool](t, admin, `window.askbridgeMarker === true`) {
			t.Fatal("the page reloaded")
		}
		openRow(t, admin, q.ID)
		text := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(q.ID)+`").innerText`)
		for _, want := range []string{"Which region for the bucket?", "Customers are mostly in the EU.", "storage", "agent-a", "run-browser", "default", "then it times out"} {
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
		apptest.Do(t, admin, chromedp.SendKeys(chromedp.ID("text-"+q.ID), "eu-west-1"))
		rec := answerInPlace(t, admin, q.ID, cardSel(q.ID)+" form.answer button[type=submit]")
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
		case <-time.After(apptest.WaitBound):
			t.Fatal("the agent's wait did not return after the console's answer")
		}
		waitCard(t, operator, q.ID, "answered")
		if n := apptest.Eval[int](t, operator, `document.querySelectorAll("`+cardSel(q.ID)+` form").length`); n != 0 {
			t.Fatalf("the closed card still has %d forms", n)
		}
		if line := apptest.Eval[string](t, operator, `document.querySelector("`+cardSel(q.ID)+` .outcome-line").textContent`); !strings.Contains(line, "Answered by admin") {
			t.Fatalf("outcome: %q", line)
		}
	})

	t.Run("an answer from the CLI and the API closes the card in the open page", func(t *testing.T) {
		apptest.GoTo(t, admin, m.URL+"/")
		waitLive(t, admin)
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Name the service?"})
		waitCard(t, admin, q.ID, "open")
		env := map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_TOKEN": apptest.OpTok}
		var out, errOut bytes.Buffer
		if code := app.Run(t.Context(), []string{"answer", string(q.ID), "--text", "atlas"}, func(k string) string { return env[k] }, nil, &out, &errOut); code != 0 {
			t.Fatalf("askbridge answer: %d %s", code, errOut.String())
		}
		waitCard(t, admin, q.ID, "answered")
		if line := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(q.ID)+` .outcome-line").textContent`); !strings.Contains(line, "Answered by ops") || !strings.Contains(line, "via api") {
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
		apptest.GoTo(t, admin, m.URL+"/")
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
		for _, id := range []core.QuestionID{dec.ID, appr.ID, form.ID, decl.ID, canc.ID} {
			waitCard(t, admin, id, "open")
		}
		// The hard-to-reverse decision is first, as the API lists it.
		if first := apptest.Eval[string](t, admin, `document.querySelector("#inbox .card[data-state=open]").id`); first != "card-"+string(dec.ID) {
			t.Fatalf("first open card is %s, want the hard-to-reverse decision", first)
		}

		// Decision: one button per option, recommended marked, and a note;
		// hard to reverse, so the choice is confirmed on a page of its own
		// first (the question's page answers without script's help).
		apptest.GoTo(t, admin, m.URL+"/q/"+string(dec.ID))
		waitLive(t, admin)
		if rec := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(dec.ID)+` button[value=kafka]").innerText`); !strings.Contains(rec, "RECOMMENDED") || !strings.Contains(rec, "Durable and replayable") {
			t.Fatalf("the kafka button: %q", rec)
		}
		apptest.Do(t, admin, chromedp.SendKeys(chromedp.ID("note-"+dec.ID), "lighter for now"))
		if status := browsertest.Submit(t, admin, cardSel(dec.ID)+" button[value=sqs]"); status != http.StatusOK {
			t.Fatalf("decision: %d", status)
		}
		if got := getQ(t, ops, dec.ID); got.State != core.StateOpen {
			t.Fatalf("a hard-to-reverse choice was recorded before its confirmation: %s", got.State)
		}
		if c := apptest.Eval[string](t, admin, `document.querySelector(".confirm-step").innerText`); !strings.Contains(c, "SQS") || !strings.Contains(c, "lighter for now") {
			t.Fatalf("the confirmation does not repeat the choice:\n%s", c)
		}
		if status := browsertest.Submit(t, admin, "button.confirm-yes"); status != http.StatusOK {
			t.Fatalf("confirm: %d", status)
		}
		if res := getQ(t, ops, dec.ID).Resolution; res.OptionID != "sqs" || res.Reason != "lighter for now" || res.Answer != "Managed and light; no replay." {
			t.Fatalf("decision recorded: %+v", res)
		}

		// Approval: pretty arguments and the digest; deny with a reason.
		apptest.GoTo(t, admin, m.URL+"/q/"+string(appr.ID))
		waitLive(t, admin)
		args := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(appr.ID)+` pre.args").textContent`)
		if args != "{\n  \"db\": \"billing\",\n  \"steps\": [\n    1,\n    2\n  ]\n}" {
			t.Fatalf("arguments:\n%s", args)
		}
		if d := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(appr.ID)+` .digest").innerText`); !strings.Contains(d, appr.Call.ArgumentsSHA256) {
			t.Fatalf("digest: %q", d)
		}
		apptest.Do(t, admin, chromedp.SendKeys(chromedp.ID("reason-"+appr.ID), "not during the sale"))
		if status := browsertest.Submit(t, admin, cardSel(appr.ID)+" button.deny"); status != http.StatusOK {
			t.Fatalf("deny: %d", status)
		}
		if res := getQ(t, ops, appr.ID).Resolution; res.Approved == nil || *res.Approved || res.Reason != "not during the sale" || res.ArgumentsSHA256 != appr.Call.ArgumentsSHA256 {
			t.Fatalf("approval recorded: %+v", res)
		}
		if rec := apptest.Eval[string](t, admin, `document.getElementById("recorded").innerText`); !strings.Contains(rec, "denied") || !strings.Contains(rec, appr.Call.ArgumentsSHA256) {
			t.Fatalf("the response: %s", rec)
		}

		// Form: the operator answers one item; the admin sees who, and
		// answers the other with free text.
		apptest.GoTo(t, operator, m.URL+"/q/"+string(form.ID))
		waitLive(t, operator)
		apptest.Do(t, operator, chromedp.Click(chromedp.CSS(cardSel(form.ID)+` fieldset[data-item=region] input[value=eu]`)))
		if status := browsertest.Submit(t, operator, cardSel(form.ID)+` fieldset[data-item=region] button.item-one`); status != http.StatusOK {
			t.Fatalf("form item: %d", status)
		}
		apptest.GoTo(t, admin, m.URL+"/q/"+string(form.ID))
		waitLive(t, admin)
		apptest.Until(t, admin, `document.querySelector("`+cardSel(form.ID)+` li[data-item=region]").innerText.includes("answered by ops")`)
		if n := apptest.Eval[int](t, admin, `document.querySelectorAll("`+cardSel(form.ID)+` fieldset[data-item=region]").length`); n != 0 {
			t.Fatal("an answered item is offered again")
		}
		apptest.Do(t, admin, chromedp.SendKeys(chromedp.ID("other-"+form.ID+"-size"), "medium"))
		if status := browsertest.Submit(t, admin, cardSel(form.ID)+` fieldset[data-item=size] button.item-one`); status != http.StatusOK {
			t.Fatalf("form item 2: %d", status)
		}
		if got := getQ(t, ops, form.ID); got.State != core.StateAnswered || len(got.Answers) != 2 || got.Answers[1].Text != "medium" {
			t.Fatalf("form recorded: %+v", got.Answers)
		}

		// Decline, and cancel (admins).
		apptest.GoTo(t, admin, m.URL+"/q/"+string(decl.ID))
		waitLive(t, admin)
		if status := browsertest.Submit(t, admin, cardSel(decl.ID)+` form.decline button`); status != http.StatusOK {
			t.Fatalf("decline: %d", status)
		}
		apptest.GoTo(t, admin, m.URL+"/q/"+string(canc.ID))
		waitLive(t, admin)
		apptest.Do(t, admin, chromedp.SendKeys(chromedp.CSS(cardSel(canc.ID)+` form.cancel input[name=reason]`), "asked twice"))
		if status := browsertest.Submit(t, admin, cardSel(canc.ID)+` form.cancel button`); status != http.StatusOK {
			t.Fatalf("cancel: %d", status)
		}
		if a, b := getQ(t, ops, decl.ID).State, getQ(t, ops, canc.ID); a != core.StateDeclined || b.State != core.StateCancelled || b.Resolution.Reason != "asked twice" {
			t.Fatalf("decline %s, cancel %s %q", a, b.State, b.Resolution.Reason)
		}
	})

	t.Run("a stale button tells the loser who won", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Raced?"})
		apptest.GoTo(t, admin, m.URL+"/q/"+string(q.ID)) // the question's own page
		waitLive(t, admin)
		// Keep a copy of the form as it was, as a page that missed the
		// change would hold it; the operator answers over the API; the
		// page closes the card live; then the stale copy is posted.
		apptest.Eval[bool](t, admin, fmt.Sprintf(`(function(){ window.staleForm = document.querySelector(%q).cloneNode(true); return true; })()`, cardSel(q.ID)+" form.answer"))
		if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Answer: "first"}); err != nil {
			t.Fatal(err)
		}
		waitCard(t, admin, q.ID, "answered")
		apptest.Eval[bool](t, admin, `(function(){ var f = window.staleForm; f.querySelector("textarea").value = "second"; f.hidden = true; document.body.appendChild(f); f.submit(); return true; })()`)
		apptest.Until(t, admin, `document.getElementById("problem") !== null`)
		// Core's one refusal note (the card's outcome line), and the card
		// below it shows what won.
		if p := apptest.Eval[string](t, admin, `document.getElementById("problem").innerText`); !strings.Contains(p, "Already closed. Answered by ops on ") ||
			!strings.Contains(p, " via api. Your answer was not recorded.") {
			t.Fatalf("the loser reads %q", p)
		}
		if c := apptest.Eval[string](t, admin, `document.querySelector("`+cardSel(q.ID)+` .choice").innerText`); c != "first" {
			t.Fatalf("the loser's page shows %q as what won", c)
		}
		if got := getQ(t, ops, q.ID); got.Resolution.Answer != "first" {
			t.Fatalf("the loser changed the answer: %q", got.Resolution.Answer)
		}
	})

	t.Run("an observer has no controls", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Scale down?", Tool: "scale", Arguments: []byte(`{"n":1}`)})
		obs := br.Tab(t, 1280, 900, false)
		signIn(t, obs, m.URL, apptest.ObsTok, "dash")
		waitCard(t, obs, q.ID, "open")
		if n := apptest.Eval[int](t, obs, `document.querySelectorAll("form[action*='/answer'], form[action*='/decline'], form[action*='/cancel'], button[name=option]").length`); n != 0 {
			t.Fatalf("the observer has %d controls", n)
		}
		if !strings.Contains(apptest.Eval[string](t, obs, `document.querySelector("`+cardSel(q.ID)+`").innerText`), "Scale down?") {
			t.Fatal("the observer does not see the question")
		}
	})

	t.Run("a forged cross-site post is refused", func(t *testing.T) {
		q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Delete the backups?", Tool: "rm", Arguments: []byte(`{"path":"/backups"}`)})
		apptest.GoTo(t, admin, m.URL+"/")
		waitCard(t, admin, q.ID, "open")
		// Even knowing the session's CSRF token, another origin's form is
		// refused: the browser says where the post came from.
		csrf := apptest.Eval[string](t, admin, `document.querySelector("input[name=csrf]").value`)
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/q/%s/answer"><input type="hidden" name="csrf" value="%s">`+
				`<input type="hidden" name="option" value="approve"><button id="go" type="submit">win a prize</button></form>`, m.URL, q.ID, csrf)
		}))
		defer evil.Close()
		apptest.GoTo(t, admin, evil.URL)
		if status := browsertest.Submit(t, admin, "#go"); status != http.StatusForbidden {
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
		tab := br.Tab(t, 1280, 900, false)
		signIn(t, tab, px.url, apptest.OpTok, "ops")
		q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Behind a flaky proxy?"})
		waitCard(t, tab, q.ID, "open")
		px.pause()
		apptest.Until(t, tab, `document.body.getAttribute("data-live") === "no"`)
		if !apptest.Eval[bool](t, tab, `document.querySelector("`+cardSel(q.ID)+` form.answer button").getAttribute("aria-disabled") === "true" && !document.getElementById("offline").hidden`) {
			t.Fatal("the card stays answerable while the page cannot hear changes")
		}
		// Sending waits, whichever way it is asked for.
		apptest.Eval[bool](t, tab, `(function () { var f = document.querySelector("`+cardSel(q.ID)+` form.answer"); f.querySelector("textarea").value = "sent while cut off"; f.requestSubmit(); return true; })()`)
		if apptest.Eval[bool](t, tab, `document.querySelector("`+cardSel(q.ID)+`").getAttribute("aria-busy") === "true"`) {
			t.Fatal("a card's form was sent while the page cannot hear changes")
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
		phone := br.Tab(t, 390, 844, true)
		signIn(t, phone, m.URL, apptest.OpTok, "ops")
		waitCard(t, phone, q.ID, "open")
		openRow(t, phone, q.ID)
		fitsWidth(t, phone, "the inbox", 390)
		// The approve button is a full-width target.
		w := apptest.Eval[float64](t, phone, `document.querySelector("`+cardSel(q.ID)+` button.approve").getBoundingClientRect().width`)
		if inner := apptest.Eval[float64](t, phone, `window.innerWidth`); w < inner*0.7 {
			t.Fatalf("the approve button is %.0fpx of %.0fpx", w, inner)
		}
		answerInPlace(t, phone, q.ID, cardSel(q.ID)+" button.approve")
		if res := getQ(t, ops, q.ID).Resolution; res.Approved == nil || !*res.Approved {
			t.Fatalf("recorded: %+v", res)
		}
	})
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

// TestConsoleInboxLeavesOutQuestionsClosedAtOnce: a question a policy
// rule decides as it is asked never waits on anyone, so the open inbox
// does not show it: its "asked" event makes the page fetch its row, and
// that row comes back closed.
func TestConsoleInboxLeavesOutQuestionsClosedAtOnce(t *testing.T) {
	s := app.Settings{}
	anyone := map[string][]string{"api": {"*"}, "console": {"*"}}
	s.File.Routes = map[string]app.RouteFile{core.DefaultRoute: {Deciders: anyone, Rules: []app.RuleFile{
		{Name: "reads", When: `tool == "read_file"`, Decide: "allow"},
	}}}
	m := apptest.Start(t, s)
	agent := client.New(m.URL, apptest.AgentA)
	br := apptest.NewChrome(t)
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")
	if apptest.Eval[bool](t, tab, `document.getElementById("empty").hidden`) {
		t.Fatal("an empty inbox does not say so")
	}
	// Every element the page adds to the list, the stand-in for a new
	// row while it is fetched included, so the test knows when the page
	// has dealt with the question.
	apptest.Eval[bool](t, tab, `(function(){ window.added = []; new MutationObserver(function(ms){ ms.forEach(function(m){ m.addedNodes.forEach(function(n){ if (n.id) { window.added.push(n.id); } }); }); }).observe(document.getElementById("inbox"), { childList: true }); return true; })()`)

	q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Read the config?", Tool: "read_file", Arguments: []byte(`{"path":"/etc/app.conf"}`)})
	if q.State == core.StateOpen {
		t.Fatalf("the rule left the question %s", q.State)
	}
	apptest.Until(t, tab, `window.added.includes("card-`+string(q.ID)+`") && document.querySelector("#inbox > .stub") === null`)
	if apptest.Eval[bool](t, tab, `document.querySelector("`+cardSel(q.ID)+`") !== null`) {
		t.Fatal("the open inbox shows a question closed as it was asked")
	}
	if apptest.Eval[bool](t, tab, `document.getElementById("empty").hidden`) || apptest.Eval[string](t, tab, `document.getElementById("open-count").textContent`) != "0" {
		t.Fatal("the inbox no longer says nothing is waiting")
	}
}

// TestConsoleRelativeTimesMoveOn: an inbox left open keeps its "asked 5m
// ago" and "due in 4m" true as time passes, as a fresh render would word
// them, and so does a question's page, its deadline's too. The page's
// clock is moved on by overriding Date.now, which the page reads its
// time from.
func TestConsoleRelativeTimesMoveOn(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	br := apptest.NewChrome(t)
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")

	q := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Which bucket?", Timeout: client.Duration(10 * time.Minute)})
	waitCard(t, tab, q.ID, "open")
	age, due := cardSel(q.ID)+" time.age", cardSel(q.ID)+" time.due"
	text := func(sel string) string {
		return apptest.Eval[string](t, tab, `document.querySelector("`+sel+`").textContent`)
	}
	if a, d := text(age), text(due); a != "asked just now" || d != "due in 9m" {
		t.Fatalf("a new row reads %q, %q", a, d)
	}
	later := `(function(){ var now = Date.now; Date.now = function(){ return now() + (5 * 60 + 10) * 1000; }; return true; })()`
	apptest.Eval[bool](t, tab, later)
	apptest.Until(t, tab, `document.querySelector("`+age+`").textContent === "asked 5m ago" && document.querySelector("`+due+`").textContent === "due in 4m"`)

	apptest.GoTo(t, tab, m.URL+"/q/"+string(q.ID))
	waitCard(t, tab, q.ID, "open")
	asked, left := cardSel(q.ID)+" .meta time.age", cardSel(q.ID)+" .meta time.due"
	if a, d := text(asked), text(left); a != "just now" || d != "due in 9m" {
		t.Fatalf("the question's page reads %q, %q", a, d)
	}
	apptest.Eval[bool](t, tab, later)
	apptest.Until(t, tab, `document.querySelector("`+asked+`").textContent === "5m ago" && document.querySelector("`+left+`").textContent === "due in 4m"`)
}
