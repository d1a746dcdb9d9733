package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

func TestEveryStateChangeNeedsCSRFAndTheSameOrigin(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?"})
	events := e.eventCount()
	refused := func(name string, r response) {
		t.Helper()
		if r.status != http.StatusForbidden {
			t.Fatalf("%s: %d, want 403", name, r.status)
		}
		if got := e.get(q.ID); !got.Open() {
			t.Fatalf("%s changed the question: %s", name, got.State)
		}
		if n := e.eventCount(); n != events {
			t.Fatalf("%s appended %d events", name, n-events)
		}
	}
	path := "/q/" + string(q.ID) + "/answer"
	refused("no token", b.post(path, url.Values{"text": {"eu"}, "csrf": {""}}))
	refused("a wrong token", b.post(path, url.Values{"text": {"eu"}, "csrf": {"forged"}}))
	refused("another site", b.post(path, url.Values{"text": {"eu"}}, "Sec-Fetch-Site", "cross-site"))
	refused("another origin", b.post(path, url.Values{"text": {"eu"}}, "Origin", "https://evil.example"))
	refused("decline, no token", b.post("/q/"+string(q.ID)+"/decline", url.Values{"csrf": {""}}))
	// Sign-out and sign-in are state changes too.
	if r := b.post("/signout", url.Values{"csrf": {""}}); r.status != http.StatusForbidden {
		t.Fatalf("sign out without a token: %d", r.status)
	}
	if r := b.get("/"); !strings.Contains(r.body, "ops-alice") {
		t.Fatal("a forged sign-out signed the browser out")
	}
	fresh := e.browser(e.srv)
	if r := fresh.post("/signin", url.Values{"token": {opAlice.secret}, "csrf": {"guess"}}); r.status != http.StatusForbidden || sessionCookie(t, r) != nil {
		t.Fatalf("a sign-in without the form's token: %d", r.status)
	}
	// With the token, from this origin, it counts.
	if r := b.post(path, url.Values{"text": {"eu-west-1"}}); r.status != http.StatusOK {
		t.Fatalf("a proper post: %d\n%s", r.status, r.body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, nil)
	b := e.browser(e.srv)
	for _, path := range []string{"/", "/assets/console.js", "/nope"} {
		r := b.get(path)
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") {
			t.Errorf("%s: CSP allows inline code or another origin: %q", path, csp)
		}
	}
	// No inline script or style, and nothing from another origin, in any page.
	page := b.get("/").body
	for _, bad := range []string{"<script>", "style=", "onclick", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the sign-in page holds %q", bad)
		}
	}
}

func TestObserverSeesEverythingAndAnswersNothing(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{"env":"prod"}`)})
	w := e.signedIn(watcher)
	r := w.get("/")
	if !strings.Contains(r.body, "Deploy?") || !strings.Contains(r.body, q.Call.ArgumentsSHA256) {
		t.Fatal("the observer does not see the question")
	}
	for _, control := range []string{"/answer", "/decline", "/cancel", `name="option"`} {
		if strings.Contains(r.body, control) {
			t.Fatalf("the observer's inbox has %s", control)
		}
	}
	for _, path := range []string{"/answer", "/decline", "/cancel"} {
		if r := w.post("/q/"+string(q.ID)+path, url.Values{"option": {"approve"}}); r.status != http.StatusForbidden {
			t.Fatalf("observer %s: %d", path, r.status)
		}
	}
	if !e.get(q.ID).Open() {
		t.Fatal("an observer changed the question")
	}
	// An operator and an admin may withdraw, as on the API
	// (access.Role.MayWithdraw); before, the console refused an operator
	// the API allowed.
	op := e.signedIn(opAlice)
	if !strings.Contains(op.get("/").body, "/cancel") {
		t.Fatal("an operator is not offered withdraw")
	}
	admin := e.signedIn(root)
	if !strings.Contains(admin.get("/").body, "/cancel") {
		t.Fatal("an admin is not offered withdraw")
	}
	other := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?", Reversibility: core.Reversible})
	if r := op.post("/q/"+string(other.ID)+"/cancel", nil); r.status != http.StatusOK || e.get(other.ID).State != core.StateCancelled {
		t.Fatalf("operator withdraw: %d, %s", r.status, e.get(other.ID).State)
	}
	r = admin.post("/q/"+string(q.ID)+"/cancel", url.Values{"reason": {"superseded"}})
	if got := e.get(q.ID); r.status != http.StatusOK || got.State != core.StateCancelled || got.Resolution.Reason != "superseded" ||
		got.Resolution.Decider.Surface != core.SurfaceConsole || got.Resolution.Decider.ID != "root" || got.Resolution.Decider.Name != "root" {
		t.Fatalf("admin cancel: %d, %+v", r.status, got.Resolution)
	}
}

func TestTheRoutesConsoleDecidersApply(t *testing.T) {
	routes := openRoutes()
	routes["infra"] = core.Route{Deciders: map[core.Surface][]string{
		core.SurfaceConsole: {"ops-alice", "role:admin"},
		core.SurfaceAPI:     {"ops-bob"}, // the API's list does not reach the console
	}}
	e := newEnv(t, routes)
	q := e.ask(core.AskInput{Text: "Resize the cluster?", Route: "infra"})
	bob := e.signedIn(opBob)
	r := bob.get("/")
	if strings.Contains(r.body, "/q/"+string(q.ID)+"/answer") || !strings.Contains(r.body, "does not list ops-bob") {
		t.Fatal("bob is offered controls on a route that does not list him")
	}
	events := e.eventCount()
	if r := bob.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"yes"}}); r.status != http.StatusForbidden ||
		!strings.Contains(r.body, "not one of the people who may answer") {
		t.Fatalf("bob answers: %d", r.status)
	}
	evs, _ := e.svc.Events(t.Context(), int64(events), 0)
	if len(evs) != 1 || evs[0].Kind != core.EventRefused || evs[0].Surface != core.SurfaceConsole ||
		evs[0].Actor != core.Pseudonym([]byte("test-actor-key"), core.Decider{Surface: core.SurfaceConsole, ID: "ops-bob"}) {
		t.Fatalf("the refusal is not recorded as core records refusals: %+v", evs)
	}
	if !e.get(q.ID).Open() {
		t.Fatal("bob's answer counted")
	}
	// A role entry lets the admin in; a name lets alice in.
	if !strings.Contains(e.signedIn(root).get("/").body, "/q/"+string(q.ID)+"/answer") {
		t.Fatal("role:admin did not let the admin answer")
	}
	alice := e.signedIn(opAlice)
	if r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"yes, to 5 nodes"}}); r.status != http.StatusOK {
		t.Fatalf("alice: %d", r.status)
	}
	if got := e.get(q.ID); got.Resolution.Answer != "yes, to 5 nodes" || got.Resolution.Decider.Surface != core.SurfaceConsole || got.Resolution.Decider.ID != "ops-alice" {
		t.Fatalf("recorded: %+v", got.Resolution)
	}
}

// An operator or an admin may withdraw any question, as on the API, so
// the console offers it on a question whose route does not list them:
// the route says who may answer, not who may take the question back.
func TestWithdrawIsOfferedToEveryOperatorNotOnlyTheRoutes(t *testing.T) {
	routes := map[string]core.Route{core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceConsole: {opAlice.name}}}}
	e := newEnv(t, routes)
	q := e.ask(core.AskInput{Text: "Stuck question nobody on duty can answer"})
	cancel := `action="/q/` + string(q.ID) + `/cancel"`
	bob := e.signedIn(opBob)
	for _, path := range []string{"/", "/rows/" + string(q.ID), "/q/" + string(q.ID)} {
		r := bob.get(path)
		if !strings.Contains(r.body, cancel) {
			t.Fatalf("%s: an operator the route does not list is offered no withdraw", path)
		}
		if strings.Contains(r.body, `action="/q/`+string(q.ID)+`/answer"`) || !strings.Contains(r.body, "does not list ops-bob") {
			t.Fatalf("%s: the operator is offered answers the route does not give them", path)
		}
	}
	if r := e.signedIn(watcher).get("/rows/" + string(q.ID)); strings.Contains(r.body, cancel) {
		t.Fatal("an observer is offered withdraw")
	}
	if r := bob.post("/q/"+string(q.ID)+"/cancel", url.Values{"reason": {"stale"}}); r.status != http.StatusOK || e.get(q.ID).State != core.StateCancelled {
		t.Fatalf("the offered withdraw: %d, %s", r.status, e.get(q.ID).State)
	}
	if r := bob.get("/rows/" + string(q.ID)); strings.Contains(r.body, cancel) {
		t.Fatal("withdraw is offered on a closed question")
	}
}

func TestNotFoundLooksTheSameForEveryCase(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	valid := e.ask(core.AskInput{Text: "x"}).ID
	unknown := string(valid[:1]) + strings.Repeat("a", len(valid)-1)
	var first response
	for i, path := range []string{"/q/" + unknown, "/q/not!an!id", "/q/" + strings.Repeat("z", 300), "/rows/" + unknown, "/nothing-here", "/q/" + unknown + "/part"} {
		r := b.get(path)
		if r.status != http.StatusNotFound {
			t.Fatalf("%s: %d", path, r.status)
		}
		if i == 0 {
			first = r
		} else if r.body != first.body {
			t.Fatalf("%s reads differently from an unknown id:\n%s\n---\n%s", path, r.body, first.body)
		}
	}
	for _, path := range []string{"/q/" + unknown + "/answer", "/q/not!an!id/decline"} {
		if r := b.post(path, url.Values{"text": {"x"}}); r.status != http.StatusNotFound || r.body != first.body {
			t.Fatalf("POST %s: %d", path, r.status)
		}
	}
}
