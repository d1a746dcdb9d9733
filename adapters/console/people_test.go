package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// peopleRoutes: infra needs two of Alice and the oncall group (Bob,
// Carol); ops is anyone on the console, or the Slack account U-loner.
func peopleRoutes() map[string]core.Route {
	return map[string]core.Route{
		core.DefaultRoute: {Deciders: map[core.Surface][]string{core.SurfaceConsole: {"*"}}},
		"infra": {People: []string{"person:alice", "group:oncall"}, Quorum: 2, EscalateTo: "ops",
			Rules: []core.Rule{{Name: "no-prod-drops", When: `tool == "sql" && args.sql.startsWith("DROP")`, Decide: core.DecideDeny, Reason: "never"}}},
		"ops": {Deciders: map[core.Surface][]string{core.SurfaceSlack: {"U-loner", "role:leads"}, core.SurfaceConsole: {"*"}},
			Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: "C-ops"}, {Surface: core.SurfaceEmail, ID: "alice@example.com"}}},
	}
}

// withPeople rebuilds e's service over the same store with people and
// groups, and serves a console over it.
func withPeople(t *testing.T, e *env, routes map[string]core.Route) {
	t.Helper()
	svc, err := core.New(e.store.Store, core.Config{Routes: routes, ActorKey: []byte("test-actor-key"),
		People: map[string]core.Person{
			"alice": {DisplayName: "Alice Example", IDs: map[core.Surface][]string{core.SurfaceConsole: {opAlice.name}, core.SurfaceSlack: {"U-alice"}}},
			"bob":   {IDs: map[core.Surface][]string{core.SurfaceConsole: {opBob.name}}},
			"carol": {IDs: map[core.Surface][]string{core.SurfaceSlack: {"U-carol"}}},
		},
		Groups: map[string]core.Group{"oncall": {Members: []string{"bob", "carol"}}},
	}, e.clock)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.srv = e.serve()
}

// card is one who-card of the People page by its data attribute.
func whoCard(body, attr, name string) string {
	re := regexp.MustCompile(`(?s)<article class="who-card[^"]*" ` + attr + `="` + regexp.QuoteMeta(name) + `">.*?</article>`)
	return re.FindString(body)
}

// TestPeoplePageShowsWhoEachQuestionWaitsOn: a quorum question waits on
// everyone of its route who has not voted, with the tally; a vote takes
// the voter off; the routes show their deciders and policies.
func TestPeoplePageShowsWhoEachQuestionWaitsOn(t *testing.T) {
	e := newEnv(t, nil)
	withPeople(t, e, peopleRoutes())
	quorum := e.ask(core.AskInput{Kind: core.KindApproval, Route: "infra", Text: "Restart the primary?", Tool: "shell",
		Arguments: []byte(`{"cmd":"systemctl restart pg"}`), Reversibility: core.HardToReverse})
	anyone := e.ask(core.AskInput{Route: "ops", Text: "Which region?\nSecond line"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: quorum.ID, OptionID: core.ApproveOption,
		Decider: core.Decider{Surface: core.SurfaceConsole, ID: opBob.name}}); err != nil {
		t.Fatal(err)
	}
	b := e.signedIn(watcher)
	r := b.get("/people")
	if r.status != http.StatusOK {
		t.Fatalf("people: %d\n%s", r.status, r.body)
	}
	alice := whoCard(r.body, "data-person", "alice")
	if !strings.Contains(alice, "Alice Example") || !strings.Contains(alice, `href="/q/`+string(quorum.ID)+`"`) ||
		!strings.Contains(alice, "1 of 2 approvals") || !strings.Contains(alice, "1 waiting") {
		t.Fatalf("Alice's card:\n%s", alice)
	}
	if bob := whoCard(r.body, "data-person", "bob"); !strings.Contains(bob, "0 waiting") || strings.Contains(bob, string(quorum.ID)) {
		t.Fatalf("Bob voted, yet:\n%s", bob)
	}
	if oncall := whoCard(r.body, "data-group", "oncall"); !strings.Contains(oncall, string(quorum.ID)) || !strings.Contains(oncall, "bob, carol") {
		t.Fatalf("the oncall group (Carol has not voted):\n%s", oncall)
	}
	if loner := whoCard(r.body, "data-entry", "slack:U-loner"); !strings.Contains(loner, `href="/q/`+string(anyone.ID)+`"`) ||
		!strings.Contains(loner, ">Which region?</a>") {
		t.Fatalf("the account U-loner:\n%s", loner)
	}
	if any := whoCard(r.body, "data-entry", "anyone on console"); !strings.Contains(any, string(anyone.ID)) {
		t.Fatalf("anyone on the console:\n%s", any)
	}
	infra := whoCard(r.body, "data-route", "infra")
	for _, want := range []string{"1 open", "person:alice, group:oncall", "(alice, bob, carol)", "denies: veto", "Escalates to", "no-prod-drops", "deny"} {
		if !strings.Contains(infra, want) {
			t.Errorf("the infra route lacks %q:\n%s", want, infra)
		}
	}
	ops := whoCard(r.body, "data-route", "ops")
	if !strings.Contains(ops, "slack: U-loner, role:leads; console: *") && !strings.Contains(ops, "console: *; slack: U-loner, role:leads") {
		t.Errorf("the ops route's deciders:\n%s", ops)
	}
	if !strings.Contains(ops, "slack C-ops") || !strings.Contains(ops, "email: 1 recipient") || strings.Contains(ops, "alice@example.com") {
		t.Errorf("the ops route's rooms (an address is counted, not shown):\n%s", ops)
	}
}

// TestPeoplePageNamesOneWayDoorsByTheDoor: a route whose deciders are an
// ntfy topic and an email address shows, to an observer, that it has
// such deciders and who its open question waits on, but neither the topic
// (it works as a password: whoever knows it receives the signed action
// links) nor the address; a chat account beside them is still named.
func TestPeoplePageNamesOneWayDoorsByTheDoor(t *testing.T) {
	const topic, address = "infra-approvals-q8z2", "ops@corp.com"
	e := newEnv(t, nil)
	routes := peopleRoutes()
	routes["alerts"] = core.Route{Deciders: map[core.Surface][]string{
		core.SurfaceNtfy: {topic}, core.SurfaceEmail: {address}, core.SurfaceSlack: {"U-pager"},
	}}
	withPeople(t, e, routes)
	q := e.ask(core.AskInput{Route: "alerts", Text: "Page the database team?"})
	r := e.signedIn(watcher).get("/people")
	if r.status != http.StatusOK {
		t.Fatalf("people: %d\n%s", r.status, r.body)
	}
	for _, secret := range []string{topic, address} {
		if strings.Contains(r.body, secret) {
			t.Errorf("the People page shows %q to an observer", secret)
		}
	}
	alerts := whoCard(r.body, "data-route", "alerts")
	for _, want := range []string{"ntfy: " + core.RecipientLabel(core.SurfaceNtfy), "email: " + core.RecipientLabel(core.SurfaceEmail), "slack: U-pager"} {
		if !strings.Contains(alerts, want) {
			t.Errorf("the alerts route's deciders lack %q:\n%s", want, alerts)
		}
	}
	for _, entry := range []string{core.RecipientLabel(core.SurfaceNtfy), core.RecipientLabel(core.SurfaceEmail), "slack:U-pager"} {
		if c := whoCard(r.body, "data-entry", entry); !strings.Contains(c, `href="/q/`+string(q.ID)+`"`) {
			t.Errorf("nothing waits on %q:\n%s", entry, c)
		}
	}
}
