package console_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

func TestARaceHasOneWinnerAndTheLosersHearWho(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Queue?", Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "durable, heavy", Recommended: true},
		{ID: "sqs", Title: "SQS", Writeup: "managed, lighter"},
	}})
	browsers := []*browser{e.signedIn(opAlice), e.signedIn(opBob), e.signedIn(root)}
	var wg sync.WaitGroup
	results := make([]response, 9)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := *browsers[i%3] // its own copy: post notes the page's CSRF token
			results[i] = b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {[]string{"kafka", "sqs"}[i%2]}})
		}()
	}
	wg.Wait()
	got := e.get(q.ID)
	wins, winner := 0, -1
	for i, r := range results {
		if r.status == http.StatusOK {
			wins, winner = wins+1, i
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
	line := "Answered by <bdi>" + core.DeciderLabel(got.Resolution.Decider) + "</bdi> on " + got.Resolution.At.Format("2006-01-02 15:04 UTC") + " via console."
	for i, r := range results {
		switch r.status {
		case http.StatusOK:
			if !strings.Contains(r.body, got.Resolution.Answer) {
				t.Fatalf("the winner's page does not show what was recorded")
			}
		case http.StatusConflict:
			// The winner's own other posts are told their answer stands;
			// everyone else's, that theirs was not recorded.
			want := "Already closed. " + line + " Your answer was not recorded."
			if i%3 == winner%3 {
				want = "Already closed by your earlier answer: " + line + " That answer stands; nothing more was recorded."
			}
			if !strings.Contains(r.body, want) || !strings.Contains(r.body, card.ChoiceLabel(got)) {
				t.Fatalf("a loser's page lacks %q:\n%s", want, r.body)
			}
		default:
			t.Fatalf("status %d", r.status)
		}
	}
	// An answer from the API first: the console's loser is told so.
	q2 := e.ask(core.AskInput{Text: "Name?"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q2.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot", Name: "ops-bot"}, Text: "atlas"}); err != nil {
		t.Fatal(err)
	}
	r := browsers[0].post("/q/"+string(q2.ID)+"/answer", url.Values{"text": {"zeus"}})
	if r.status != http.StatusConflict || !strings.Contains(r.body, "Already closed. Answered by <bdi>ops-bot</bdi> on ") || !strings.Contains(r.body, " via api. Your answer was not recorded.") ||
		!strings.Contains(r.body, "atlas") {
		t.Fatalf("loser after the API: %d\n%s", r.status, r.body)
	}
}

func TestEachKindRecordsExactlyWhatWasGiven(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)

	clar := e.ask(core.AskInput{Text: "Which database?"})
	if r := b.post("/q/"+string(clar.ID)+"/answer", url.Values{"text": {"   "}}); r.status != http.StatusBadRequest || !e.get(clar.ID).Open() ||
		!strings.Contains(r.body, "must not be blank") {
		t.Fatalf("a blank answer: %d", r.status)
	}
	r := b.post("/q/"+string(clar.ID)+"/answer", url.Values{"text": {"Postgres <16>"}})
	if r.status != http.StatusOK || !strings.Contains(r.body, "Postgres &lt;16&gt;") || e.get(clar.ID).Resolution.Answer != "Postgres <16>" {
		t.Fatalf("clarification: %d", r.status)
	}

	dec := e.ask(core.AskInput{Kind: core.KindDecision, Text: "Queue?", Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "durable, heavy", Recommended: true},
		{ID: "sqs", Title: "SQS", Writeup: "managed, lighter"},
	}})
	page := b.get("/").body
	if !strings.Contains(page, `value="kafka" class="option primary"`) || !strings.Contains(page, "durable, heavy") {
		t.Fatal("the decision's buttons lack the write-up or the recommended marker")
	}
	r = b.post("/q/"+string(dec.ID)+"/answer", url.Values{"option": {"sqs"}, "text": {"cheaper for now"}})
	if res := e.get(dec.ID).Resolution; r.status != http.StatusOK || res.OptionID != "sqs" || res.Reason != "cheaper for now" ||
		!strings.Contains(r.body, "managed, lighter") || !strings.Contains(r.body, "cheaper for now") {
		t.Fatalf("decision: %d %+v", r.status, res)
	}

	appr := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop the table?", Tool: "sql", Arguments: []byte(`{"b":1,"a":"x"}`)})
	if page := b.get("/q/" + string(appr.ID)).body; !strings.Contains(page, "{\n  &#34;a&#34;: &#34;x&#34;,\n  &#34;b&#34;: 1\n}") {
		t.Fatalf("the arguments are not pretty-printed:\n%s", page)
	}
	r = b.post("/q/"+string(appr.ID)+"/answer", url.Values{"option": {"deny"}, "text": {"not on a Friday"}})
	if res := e.get(appr.ID).Resolution; r.status != http.StatusOK || *res.Approved || res.Reason != "not on a Friday" ||
		!strings.Contains(r.body, appr.Call.ArgumentsSHA256) || !strings.Contains(r.body, "denied") {
		t.Fatalf("approval: %d %+v", r.status, res)
	}

	form := e.ask(core.AskInput{Kind: core.KindForm, Text: "Set-up", Items: []core.FormItem{
		{ID: "region", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU", Recommended: true}, {ID: "us", Label: "US"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "Small"}, {ID: "l", Label: "Large"}}},
	}})
	r = b.post("/q/"+string(form.ID)+"/answer", url.Values{"item": {"region"}, "item_option": {"eu"}})
	if r.status != http.StatusOK || !e.get(form.ID).Open() {
		t.Fatalf("first item: %d", r.status)
	}
	// Bob sees alice's item answered, and only the other item to answer.
	bob := e.signedIn(opBob)
	page = bob.get("/").body
	if !strings.Contains(page, "answered by <bdi>ops-alice</bdi>") || strings.Contains(page, `name="item" value="region"`) || !strings.Contains(page, `name="item" value="size"`) {
		t.Fatal("the form does not show who answered the first item")
	}
	r = bob.post("/q/"+string(form.ID)+"/answer", url.Values{"item": {"size"}, "item_text": {"medium, please"}})
	got := e.get(form.ID)
	if r.status != http.StatusOK || got.State != core.StateAnswered || got.Answers[1].Text != "medium, please" || got.Answers[0].Decider.ID != "ops-alice" {
		t.Fatalf("form: %d %+v", r.status, got.Answers)
	}
	if !strings.Contains(r.body, "Region?") || !strings.Contains(r.body, "medium, please") {
		t.Fatal("the form's result does not show both items")
	}
	// Two people answered it: the result and a late answer both name
	// each of them, in core's one outcome line, not Bob alone.
	line := "Answered item by item on " + got.Resolution.At.UTC().Format("2006-01-02 15:04 UTC") + ": 1 by <bdi>ops-alice</bdi>, 1 by <bdi>ops-bob</bdi>"
	if !strings.Contains(r.body, line) || strings.Contains(r.body, "ops-bob</bdi> via console") {
		t.Fatalf("the form's result does not say who answered it (%q):\n%s", line, r.body)
	}
	if r = b.post("/q/"+string(form.ID)+"/answer", url.Values{"item": {"size"}, "item_option": {"s"}}); r.status != http.StatusConflict ||
		!strings.Contains(r.body, "Already closed. "+line+". Your answer was not recorded.") {
		t.Fatalf("a late answer to the form: %d\n%s", r.status, r.body)
	}

	decl := e.ask(core.AskInput{Text: "Anything?"})
	r = b.post("/q/"+string(decl.ID)+"/decline", nil)
	if got := e.get(decl.ID); r.status != http.StatusOK || got.State != core.StateDeclined {
		t.Fatalf("decline: %d %s", r.status, got.State)
	}
}

func TestHistoryShowsEveryEventAndTheResume(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q := e.ask(core.AskInput{Text: "Which region?"})
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot"}, Text: "eu"}); err != nil {
		t.Fatal(err)
	}
	b.post("/q/"+string(q.ID)+"/answer", url.Values{"text": {"late"}}) // a refused attempt
	page := b.get("/q/" + string(q.ID)).body
	digest := core.Pseudonym([]byte("test-actor-key"), core.Decider{Surface: core.SurfaceConsole, ID: "ops-alice"})
	for _, want := range []string{"asked", "answered", "refused", digest, "question already answered", "askbridge-resume", "ANSWERED"} {
		if !strings.Contains(page, want) {
			t.Errorf("the history lacks %q", want)
		}
	}
	if strings.Contains(page, ">ops-alice</td>") {
		t.Error("the history names a person instead of their digest")
	}
}

// TestWhileYouWereAway: the banner counts, once, what was asked, closed
// and is still open since the last visit among the questions the account
// may act on: a route that does not list it is left out, and an observer,
// who may act on none, has no banner.
func TestWhileYouWereAway(t *testing.T) {
	routes := openRoutes()
	routes["locked"] = core.Route{Deciders: map[core.Surface][]string{core.SurfaceConsole: {opBob.name}}}
	e := newEnv(t, routes)
	first := e.signedIn(opAlice)
	if strings.Contains(first.get("/").body, "While you were away") {
		t.Fatal("a first visit has a banner")
	}
	e.signedIn(watcher)
	e.clock.Advance(time.Hour)
	a := e.ask(core.AskInput{Text: "Asked while away"})
	e.ask(core.AskInput{Text: "Also asked"})
	e.ask(core.AskInput{Route: "locked", Text: "Only Bob may answer this"})
	if _, err := e.svc.Decline(t.Context(), a.ID, core.Decider{Surface: core.SurfaceAPI, ID: "ops-bot"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	b := e.browser(e.srv)
	b.signIn(opAlice.secret)
	page := b.get("/").body
	if !strings.Contains(page, "While you were away") || !strings.Contains(page, "2 asked, 1 closed, 1 still open") {
		t.Fatalf("banner:\n%s", page)
	}
	if strings.Contains(b.get("/").body, "While you were away") {
		t.Fatal("the banner shows twice")
	}
	w := e.browser(e.srv)
	w.signIn(watcher.secret)
	if page := w.get("/").body; strings.Contains(page, "While you were away") {
		t.Fatalf("an observer, who may act on nothing, has a banner:\n%s", page)
	}
}

// TestWhileYouWereAwayNeverPassesACapOffAsACount: the digest reads at
// most 500 questions a list (core's digestLimit); past that the banner
// says "500 or more", never "500" as if it had counted them all.
func TestWhileYouWereAwayNeverPassesACapOffAsACount(t *testing.T) {
	e := newEnv(t, nil)
	e.signedIn(opAlice)
	e.clock.Advance(time.Hour)
	for i := range 501 {
		e.ask(core.AskInput{Text: fmt.Sprintf("Question %d", i)})
	}
	e.clock.Advance(time.Hour)
	b := e.browser(e.srv)
	b.signIn(opAlice.secret)
	page := b.get("/").body
	if !strings.Contains(page, "500 or more asked, 0 closed, 500 or more still open") {
		t.Fatalf("banner:\n%s", page[:min(len(page), 4000)])
	}
}

func TestTheStreamCatchesUpFromTheLastEvent(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	q1 := e.ask(core.AskInput{Text: "one"})
	q2 := e.ask(core.AskInput{Text: "two"})

	read := func(header string, want int) []string {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/stream?since=0", nil)
		if header != "" {
			req.Header.Set("Last-Event-ID", header)
		}
		resp, err := b.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		var got []string
		sc := bufio.NewScanner(resp.Body)
		var id string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: ") && id != "":
				var c struct{ QuestionID, Kind string }
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
					t.Fatal(err)
				}
				got = append(got, id+" "+c.Kind)
			case line == "event: ready":
				if len(got) != want {
					t.Fatalf("ready after %v, want %d changes first", got, want)
				}
				return got
			}
		}
		t.Fatal("the stream ended before ready")
		return nil
	}
	all := read("", 2)
	if all[0] != "1 asked" || all[1] != "2 asked" {
		t.Fatalf("from the start: %v", all)
	}
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q1.ID, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "x"}, Text: "a"}); err != nil {
		t.Fatal(err)
	}
	_ = q2
	// A reconnect sends its Last-Event-ID, which wins over ?since.
	if got := read("2", 1); got[0] != "3 answered" {
		t.Fatalf("after reconnect: %v", got)
	}
	// Signed out, there is no stream.
	anon := e.browser(e.srv)
	if r := anon.get("/stream"); r.status != http.StatusUnauthorized {
		t.Fatalf("anonymous stream: %d", r.status)
	}
}

func TestFiltersLiveInTheURL(t *testing.T) {
	e := newEnv(t, nil)
	b := e.signedIn(opAlice)
	e.ask(core.AskInput{Text: "search one", Labels: core.Labels{Project: "search"}, Agent: "agent-b"})
	e.clock.Advance(time.Second)
	e.ask(core.AskInput{Text: "billing one", Labels: core.Labels{Project: "billing"}, Reversibility: core.HardToReverse})
	e.clock.Advance(time.Second)
	e.ask(core.AskInput{Kind: core.KindApproval, Text: "billing approval", Labels: core.Labels{Project: "billing"}, Tool: "t", Arguments: []byte(`{}`)})
	cases := map[string][]string{
		"":                               {"billing one", "search one", "billing approval"},
		"?project=billing":               {"billing one", "billing approval"},
		"?kind=approval":                 {"billing approval"},
		"?agent=agent-b":                 {"search one"},
		"?reversibility=hard_to_reverse": {"billing one"},
		"?route=other":                   {},
	}
	for query, want := range cases {
		page := b.get("/" + query).body
		n := strings.Count(page, `<details class="qrow card`)
		if n != len(want) {
			t.Errorf("%q: %d cards, want %d", query, n, len(want))
		}
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%q lacks %q", query, w)
			}
		}
	}
	// The API's order: hard to reverse first, then oldest, as the API
	// lists them.
	qs, _, _ := e.svc.ListOpen(t.Context(), "", 0)
	if qs[0].Text != "billing one" || qs[1].Text != "search one" {
		t.Fatalf("the API's own order: %s, %s", qs[0].Text, qs[1].Text)
	}
	page := b.get("/").body
	if i, j, k := strings.Index(page, "billing one"), strings.Index(page, "search one"), strings.Index(page, "billing approval"); !(i < j && j < k) {
		t.Fatalf("order: %d %d %d", i, j, k)
	}
	if r := b.get("/?kind=poem"); r.status != http.StatusBadRequest || !strings.Contains(r.body, "kind &#34;poem&#34; is not one of") {
		t.Fatalf("a bad filter: %d", r.status)
	}
}

// TestOneWayRecipientsAreCounted: a card sent to a person's address or an
// ntfy topic (which works as a password) shows on the console as a count
// of recipients, to everyone who can read it, and its history names the
// recipient by pseudonym; before, every observer could read the address
// and the topic, and with the topic answer as its person.
func TestOneWayRecipientsAreCounted(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Which region?"})
	const topic, addr = "s3cret-topic-of-alice", "alice@example.com"
	for i, ref := range []core.MessageRef{
		{Surface: core.SurfaceNtfy, Room: topic, ID: "n1"},
		{Surface: core.SurfaceEmail, Room: addr, ID: "e1"},
		{Surface: core.SurfaceSlack, Room: "C1", ID: "1.2"},
	} {
		ref.Delivery, ref.Kind = fmt.Sprintf("d%d", i), core.DeliverPost
		if err := e.svc.RecordMessage(t.Context(), q.ID, ref); err != nil {
			t.Fatal(err)
		}
	}
	w := e.signedIn(watcher)
	for _, path := range []string{"/", "/q/" + string(q.ID)} {
		page := w.get(path).body
		if strings.Contains(page, topic) || strings.Contains(page, addr) {
			t.Errorf("%s names a one-way recipient", path)
		}
		for _, want := range []string{"ntfy: 1 recipient", "email: 1 recipient", "slack C1"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
	}
}

// TestAVoteSaysItIsOne: on a route where two people must agree, a
// console answer is one vote, and the question stays open. The result
// says so in core's words, with how many are in, as chat's note does
// (not "Recorded: State open"), and the question's page shows the tally.
func TestAVoteSaysItIsOne(t *testing.T) {
	e := newEnv(t, pairRoutes())
	alice, bob := e.signedIn(opAlice), e.signedIn(opBob)

	appr := e.ask(core.AskInput{Kind: core.KindApproval, Route: "pair", Text: "Restart the primary?", Tool: "shell", Arguments: []byte(`{"cmd":"restart"}`)})
	r := alice.post("/q/"+string(appr.ID)+"/answer", url.Values{"option": {core.ApproveOption}})
	if r.status != http.StatusOK || !e.get(appr.ID).Open() {
		t.Fatalf("the vote: %d", r.status)
	}
	for _, want := range []string{"Recorded your vote (1 of 2 approvals: <bdi>ops-alice</bdi>)", "The question stays open until enough people agree."} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the result lacks %q:\n%s", want, r.body)
		}
	}
	page := bob.get("/q/" + string(appr.ID)).body
	if !strings.Contains(page, "1 of 2 approvals: ops-alice") {
		t.Errorf("the question's page shows no tally:\n%s", page)
	}
	// A question that needs two people is not one person's to decline
	// (core.Question.Declinable): the page offers no Decline.
	if strings.Contains(page, "/decline") {
		t.Errorf("the page of a question needing two people offers Decline:\n%s", page)
	}

	// In place, on the inbox row: the step says the same.
	dec := e.ask(core.AskInput{Kind: core.KindDecision, Route: "pair", Text: "Queue?", Options: []core.Option{
		{ID: "kafka", Title: "Kafka", Writeup: "durable", Recommended: true}, {ID: "sqs", Title: "SQS", Writeup: "managed"},
	}})
	r = bob.post("/q/"+string(dec.ID)+"/answer", url.Values{"option": {"kafka"}}, "X-Askbridge-Fetch", "row")
	box := regexp.MustCompile(`(?s)<div class="recorded-box".*?</div>`).FindString(r.body)
	if r.status != http.StatusOK || !strings.Contains(box, "Recorded your vote (1 of 2 for Kafka: <bdi>ops-bob</bdi>)") {
		t.Fatalf("the row's step: %d\n%s", r.status, r.body)
	}
}
