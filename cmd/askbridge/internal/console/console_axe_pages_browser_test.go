package console

import (
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// TestConsolePassesAxeOnTheOtherPages runs axe over the console pages
// TestConsolePassesAxe does not visit: the no-script result and
// confirmation pages (each with its one <h1>), a problem page, the
// observer's inbox, a quorum card, the closed cards of every kind in the
// inbox, and the filters box open. On the way, no page breaks its own
// Content-Security-Policy.
func TestConsolePassesAxeOnTheOtherPages(t *testing.T) {
	browsertest.LoadAxe(t)
	m := apptest.Start(t, app.Settings{File: app.File{Routes: map[string]app.RouteFile{
		core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}, "console": {"*"}}, MaxQuorum: 2}}}})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	dec := ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Which queue?", Reversibility: core.HardToReverse, Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "Durable.", Recommended: true}, {ID: "sqs", Title: "SQS", Writeup: "Managed."}}})
	clar := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "Name of the flag?"})
	quorum := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Rotate keys?", Tool: "rotate", Arguments: []byte(`{"all":true}`), Quorum: 2})
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up", Items: []core.FormItem{
		{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu"}, {ID: "us", Label: "us"}}}}})
	batch := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Two writes?", Calls: []core.CallInput{
		{ToolCallID: "t1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "t2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)}}})
	tab := br.Tab(t, 1280, 900, false)
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch}); err != nil {
		t.Fatal(err)
	}
	signIn(t, tab, m.URL, m.AdminToken, "admin")
	for _, q := range []*client.AgentQuestion{dec, clar, quorum, form, batch} {
		waitCard(t, tab, q.ID, "open")
	}
	if _, err := ops.Answer(t.Context(), form.ID, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "region", OptionID: "eu"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Answer(t.Context(), batch.ID, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: "no"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Answer(t.Context(), quorum.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption}); err != nil {
		t.Fatal(err)
	}
	waitCard(t, tab, form.ID, "answered")
	waitCard(t, tab, batch.ID, "answered")
	for _, q := range []*client.AgentQuestion{dec, clar, quorum, form, batch} {
		openRow(t, tab, q.ID)
	}
	apptest.Do(t, tab, chromedp.Click(chromedp.CSS(".filters-box > summary")))
	audit(t, tab, "the inbox with closed rows of every kind, a quorum and the filters open")

	// No-script pages: a question's page posts its forms as pages.
	apptest.GoTo(t, tab, m.URL+"/q/"+string(dec.ID))
	waitLive(t, tab)
	if s := browsertest.Submit(t, tab, "#card-"+string(dec.ID)+" button[value=sqs]"); s != 200 {
		t.Fatalf("confirm page: %d", s)
	}
	apptest.Until(t, tab, `document.querySelector(".confirm-step") !== null`)
	audit(t, tab, "the confirmation page")
	if s := browsertest.Submit(t, tab, ".confirm-yes"); s != 200 {
		t.Fatalf("result page: %d", s)
	}
	apptest.Until(t, tab, `document.querySelector(".result") !== null`)
	audit(t, tab, "the result page")

	apptest.GoTo(t, tab, m.URL+"/q/nosuchquestion")
	apptest.Until(t, tab, `document.querySelector(".problem") !== null`)
	audit(t, tab, "the not-found page")

	obs := br.Tab(t, 1280, 900, false)
	signIn(t, obs, m.URL, apptest.ObsTok, "dash")
	openRow(t, obs, clar.ID)
	audit(t, obs, "the observer's inbox")
	apptest.GoTo(t, tab, m.URL+"/closed")
	apptest.GoTo(t, tab, m.URL+"/people")
	apptest.GoTo(t, tab, m.URL+"/standing")
	apptest.GoTo(t, tab, m.URL+"/")
	waitLive(t, tab)
	v := apptest.Eval[string](t, tab, `sessionStorage.getItem("csp") || "[]"`)
	// The watcher hears a violation: an inline script is one.
	apptest.Eval[bool](t, tab, `(function(){ var s = document.createElement("script"); s.textContent = "window.x=1"; document.body.appendChild(s); return true; })()`)
	apptest.Until(t, tab, `(sessionStorage.getItem("csp") || "[]") !== "[]"`)
	if v != "[]" {
		t.Errorf("CSP violations: %s", v)
	}
}

// cspWatch keeps, for the tab's session, every Content-Security-Policy
// violation its pages report.
const cspWatch = `document.addEventListener("securitypolicyviolation", function (e) {
  var a = JSON.parse(sessionStorage.getItem("csp") || "[]");
  a.push(location.pathname + ": " + e.violatedDirective + " " + e.blockedURI + " " + e.sourceFile + ":" + e.lineNumber);
  sessionStorage.setItem("csp", JSON.stringify(a));
});`
