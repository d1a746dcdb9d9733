package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
)

// TestOneTokenIsOneVoter: one operator token, no person configured for
// it, votes through the API and again through the console signed in with
// the same token; the two-person sign-off stays open. Before, its votes
// were keyed api:NAME and console:NAME, and one credential closed it.
func TestOneTokenIsOneVoter(t *testing.T) {
	routes := openRoutes()
	routes["pair"] = core.Route{Deciders: map[core.Surface][]string{
		core.SurfaceConsole: {"*"}, core.SurfaceAPI: {"*"},
	}, Quorum: 2}
	e := newEnv(t, routes)
	api := aliceOnTheAPI(t, e)

	q := e.ask(core.AskInput{Kind: core.KindApproval, Route: "pair", Text: "Drop the prod table?",
		Tool: "sql", Arguments: []byte(`{"q":"drop table x"}`)})

	// Vote 1: the API, with ops-alice's token.
	if status := api(q.ID, `{"chosen_option_id":"approve"}`); status != http.StatusOK || !e.get(q.ID).Open() {
		t.Fatalf("API vote: %d", status)
	}

	// Vote 2: the console, signed in with the same token.
	alice := e.signedIn(opAlice)
	r := alice.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {core.ApproveOption}, "confirm": {"yes"}})
	got := e.get(q.ID)
	if !got.Open() {
		keys := []string{}
		for _, v := range got.Votes {
			keys = append(keys, v.Key)
		}
		t.Fatalf("a quorum of 2 closed %s (closed by %s) on the votes of ONE token, %q, cast from the API and the console: votes %v (console status %d)",
			got.State, got.Resolution.ClosedBy, opAlice.name, keys, r.status)
	}
}

// TestRoleEntryMatchesOnBothTokenDoors: the same operator token on a
// route that lets role:operator decide on the API and on the console is
// answered alike by both. Before, the console let it answer and the API
// refused it (its decider carried no roles).
func TestRoleEntryMatchesOnBothTokenDoors(t *testing.T) {
	routes := openRoutes()
	routes["ops"] = core.Route{Deciders: map[core.Surface][]string{
		core.SurfaceConsole: {"role:operator"}, core.SurfaceAPI: {"role:operator"},
	}}
	e := newEnv(t, routes)
	api := aliceOnTheAPI(t, e)
	q := e.ask(core.AskInput{Route: "ops", Text: "Which region?"})
	q2 := e.ask(core.AskInput{Route: "ops", Text: "Which zone?"})
	status := api(q.ID, `{"answer":"eu"}`)
	alice := e.signedIn(opAlice)
	r := alice.post("/q/"+string(q2.ID)+"/answer", url.Values{"text": {"eu"}})
	if status != http.StatusOK || r.status != http.StatusOK {
		t.Errorf("the same operator token: API answer %d, console answer %d", status, r.status)
	}
}

// aliceOnTheAPI serves the API over e's service with ops-alice's token as
// an operator's (the one the console signs her in with), and returns how
// she answers a question there: the answer's JSON in, its status out.
func aliceOnTheAPI(t *testing.T, e *env) func(id core.QuestionID, answer string) int {
	t.Helper()
	api, err := httpapi.New(e.svc, httpapi.Options{Tokens: []httpapi.Token{
		{Name: opAlice.name, Secret: opAlice.secret, Role: httpapi.RoleOperator},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return func(id core.QuestionID, answer string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/questions/"+string(id)+"/answer", strings.NewReader(answer))
		req.Header.Set("Authorization", "Bearer "+opAlice.secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
}
