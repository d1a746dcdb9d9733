package console

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/console/oidcfake"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// historyProgram is the real program with people, a quorum route and
// sign-in through a local identity provider. The console's redirect URL
// must be known before the program listens, so the browser reaches the
// program through a proxy whose address is taken first.
type historyProgram struct {
	*app.Main
	base string // where browsers reach the console
	idp  *oidcfake.Provider
}

func startHistoryProgram(t *testing.T) *historyProgram {
	t.Helper()
	idp, err := oidcfake.New("askbridge-console", "console-client-secret-0123")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idp.Close)
	var target atomic.Pointer[url.URL]
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target.Load()); r.Out.Host = r.In.Host },
		FlushInterval: -1, // the event stream goes through as it is written
	})
	t.Cleanup(proxy.Close)
	s := app.Settings{File: app.File{
		People: map[string]app.PersonFile{
			"alice": {Name: "Alice Example", Email: "alice@example.com"},
			"bob":   {Name: "Bob", Email: "bob@example.com"},
			"carol": {Name: "Carol", Email: "carol@example.com"},
		},
		Groups: map[string][]string{"oncall": {"bob", "carol"}},
		Routes: map[string]app.RouteFile{
			core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}, "console": {"*"}}},
			"infra":           {People: []string{"person:alice", "group:oncall"}, Quorum: 2},
		},
		OIDC: &app.OIDCFile{Issuer: idp.URL, ClientID: idp.ClientID, ClientSecret: app.Secret(idp.ClientSecret),
			RedirectURL: proxy.URL + "/oidc/callback", Roles: map[string]string{"sre": "operator"}, Label: "Sign in with Example SSO"},
	}}
	m := apptest.Start(t, s)
	u, _ := url.Parse(m.URL)
	target.Store(u)
	return &historyProgram{Main: m, base: proxy.URL, idp: idp}
}

// signInSSO signs a tab in through the identity provider, from the
// sign-in page's button, and waits for the page it asked for.
func signInSSO(t *testing.T, ctx context.Context, base, next string) {
	t.Helper()
	apptest.GoTo(t, ctx, base+next)
	apptest.Until(t, ctx, `document.getElementById("sso") !== null`)
	apptest.Do(t, ctx, chromedp.Click(chromedp.ID("sso")))
	apptest.Until(t, ctx, `location.pathname === `+fmt.Sprintf("%q", next)+` && document.querySelector(".top .who") !== null`)
}

// TestConsoleHistoryInABrowser: an operator signs in through the
// company's identity provider, answers as herself, finds last week's
// approval of a terraform apply by searching the history, exports the
// list, and reads who the open questions wait on; every page fits a
// phone and passes axe.
func TestConsoleHistoryInABrowser(t *testing.T) {
	browsertest.LoadAxe(t)
	p := startHistoryProgram(t)
	agent := client.New(p.URL, apptest.AgentA)
	ops := client.New(p.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	// Last week: a terraform apply approved, a bucket's removal denied,
	// a question a spreadsheet would run, and a few plain ones.
	closeOne := func(req client.AskRequest, ans client.AnswerRequest) *client.AgentQuestion {
		q := ask(t, agent, req)
		if _, err := ops.Answer(t.Context(), q.ID, ans); err != nil {
			t.Fatal(err)
		}
		return q
	}
	tf := closeOne(client.AskRequest{Kind: core.KindApproval, Question: "Apply the plan for prod?", Reversibility: core.HardToReverse,
		Tool: "shell", Arguments: []byte(`{"command":"terraform apply -auto-approve"}`)}, client.AnswerRequest{ChosenOptionID: core.ApproveOption})
	closeOne(client.AskRequest{Kind: core.KindApproval, Question: "Remove the old bucket?", Tool: "shell",
		Arguments: []byte(`{"command":"aws s3 rb s3://old"}`)}, client.AnswerRequest{ChosenOptionID: core.DenyOption})
	formula := closeOne(client.AskRequest{Kind: core.KindClarification, Question: `=HYPERLINK("http://evil.example/","x")`},
		client.AnswerRequest{Answer: "no"})
	long := "Where does /srv/" + strings.Repeat("abcdefghij", 12) + " go?"
	closeOne(client.AskRequest{Kind: core.KindClarification, Question: long}, client.AnswerRequest{Answer: "nowhere"})
	for i := range 3 {
		closeOne(client.AskRequest{Kind: core.KindClarification, Question: fmt.Sprintf("Plain question %d?", i)}, client.AnswerRequest{Answer: "yes"})
	}
	// Open now: one on infra that waits on Alice and the oncall group.
	infra := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Restart the primary database?", Route: "infra",
		Reversibility: core.HardToReverse, Tool: "shell", Arguments: []byte(`{"command":"systemctl restart postgresql"}`)})

	p.idp.SignInAs(map[string]any{"email": "alice@example.com", "email_verified": true, "groups": []string{"staff", "sre"}})
	desk := br.Tab(t, 1280, 900, false)

	t.Run("sign in through the identity provider", func(t *testing.T) {
		apptest.GoTo(t, desk, p.base+"/")
		apptest.Until(t, desk, `document.getElementById("sso") !== null`)
		audit(t, desk, "the sign-in page with the company's sign-in")
		signInSSO(t, desk, p.base, "/people")
		if who := apptest.Eval[string](t, desk, `document.querySelector(".top .who").innerText`); !strings.Contains(who, "oidc:alice") || !strings.Contains(who, "operator") {
			t.Fatalf("signed in as %q", who)
		}
		res, err := chromedp.Call(desk, network.GetCookies, network.GetCookiesParams{URLs: []string{p.base + "/"}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range res.Cookies {
			if c.Name == "askbridge_session" {
				found = true
				if !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax {
					t.Fatalf("the session cookie: %+v", c)
				}
			}
		}
		if !found {
			t.Fatal("no session cookie")
		}
		// The session decides as Alice, whom the infra route names (the
		// question is hard to reverse: this post is the confirmation).
		status := awaited[int](t, desk, fmt.Sprintf(`fetch("/q/%s/answer", {method: "POST", body: new URLSearchParams({
			csrf: document.querySelector("input[name=csrf]").value, option: "approve", confirm: "yes"})}).then(function (r) { return r.status; })`, infra.ID))
		if status != http.StatusOK {
			t.Fatalf("the vote: %d", status)
		}
		got := getQ(t, ops, infra.ID)
		if len(got.Votes) != 1 || got.Votes[0].Decider.Person != "alice" || got.Votes[0].Decider.ID != "oidc:alice" {
			t.Fatalf("votes: %+v", got.Votes)
		}
	})

	t.Run("who an open question waits on", func(t *testing.T) {
		apptest.GoTo(t, desk, p.base+"/people")
		apptest.Until(t, desk, `document.querySelector("[data-person=bob]") !== null`)
		alice := apptest.Eval[string](t, desk, `document.querySelector("[data-person=alice]").innerText`)
		bob := apptest.Eval[string](t, desk, `document.querySelector("[data-person=bob]").innerText`)
		if strings.Contains(alice, "Restart the primary") || !strings.Contains(bob, "Restart the primary") || !strings.Contains(bob, "1 of 2 approvals") {
			t.Fatalf("Alice voted; Bob has not:\nalice: %s\nbob: %s", alice, bob)
		}
		if r := apptest.Eval[string](t, desk, `document.querySelector("[data-route=infra]").innerText`); !strings.Contains(r, "person:alice, group:oncall") || !strings.Contains(r, "1 open") {
			t.Fatalf("the infra route:\n%s", r)
		}
		audit(t, desk, "/people")
		shot(t, desk, "people-desktop.png", 1280)
	})

	t.Run("find last week's terraform apply and export the list", func(t *testing.T) {
		apptest.GoTo(t, desk, p.base+"/closed")
		apptest.Until(t, desk, `document.querySelector(".closed-row") !== null`)
		if n := apptest.Eval[int](t, desk, `document.querySelectorAll(".closed-row").length`); n != 7 {
			t.Fatalf("%d closed rows, want 7", n)
		}
		apptest.Do(t, desk, chromedp.SendKeys(chromedp.CSS(`#search input[name=q]`), "terraform apply"),
			chromedp.SetValue(chromedp.CSS(`#search select[name=outcome]`), "approved"))
		if status := browsertest.Submit(t, desk, `#search button[type=submit]`); status != http.StatusOK {
			t.Fatalf("search: %d", status)
		}
		apptest.Until(t, desk, `document.querySelectorAll(".closed-row").length === 1`)
		if id := apptest.Eval[string](t, desk, `document.querySelector(".closed-row").getAttribute("data-qid")`); id != string(tf.ID) {
			t.Fatalf("found %s, want %s", id, tf.ID)
		}
		audit(t, desk, "/closed")
		shot(t, desk, "closed-desktop.png", 1280)
		// The export of the list as it stands, then of everything.
		csvText := awaited[string](t, desk, `fetch(document.getElementById("export").getAttribute("href")).then(function (r) { return r.text(); })`)
		rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
		if err != nil || len(rows) != 2 || rows[0][0] != "id" || rows[1][0] != string(tf.ID) || rows[1][8] != "approved" {
			t.Fatalf("the filtered export (%v):\n%s", err, csvText)
		}
		all := awaited[string](t, desk, `fetch("/closed.csv").then(function (r) { return r.text(); })`)
		if rows, _ := csv.NewReader(strings.NewReader(all)).ReadAll(); len(rows) != 8 {
			t.Fatalf("the whole export has %d rows, want a header and 7", len(rows))
		}
		if !strings.Contains(all, `"'=HYPERLINK(""http://evil.example/"",""x"")"`) || !strings.Contains(all, string(formula.ID)) {
			t.Fatalf("the formula was not defused:\n%s", all)
		}
		// The row leads to the question's page and its history.
		apptest.Do(t, desk, chromedp.Click(chromedp.CSS(`.closed-row a`)))
		apptest.Until(t, desk, fmt.Sprintf(`location.pathname === "/q/%s" && document.querySelector(".history tbody tr") !== null`, tf.ID))
	})

	t.Run("at phone width", func(t *testing.T) {
		phone := br.Tab(t, 390, 844, true)
		apptest.GoTo(t, phone, p.base+"/")
		apptest.Until(t, phone, `document.getElementById("sso") !== null`)
		fitsWidth(t, phone, "the sign-in page", 390)
		signInSSO(t, phone, p.base, "/closed")
		apptest.Until(t, phone, `document.querySelectorAll(".closed-row").length === 7`)
		fitsWidth(t, phone, "/closed", 390)
		// Each cell keeps its column's name on a phone.
		if label := apptest.Eval[string](t, phone, `getComputedStyle(document.querySelector(".closed-row td"), "::before").content`); label != `"Closed"` {
			t.Fatalf("a cell's label on a phone: %s", label)
		}
		shot(t, phone, "closed-phone.png", 780)
		apptest.GoTo(t, phone, p.base+"/people")
		apptest.Until(t, phone, `document.querySelector("[data-route=infra]") !== null`)
		fitsWidth(t, phone, "/people", 390)
	})
}

// awaited evaluates an expression whose value is a promise, and returns
// what it resolves to.
func awaited[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, apptest.WaitBound)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
