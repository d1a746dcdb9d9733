package adaptertest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// epoch is where every scenario's clock starts.
var epoch = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// Run runs every scenario against d, each with a fresh program and fake.
func Run(t *testing.T, d Driver) {
	for _, s := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"1_ClickWakesAgentAndEditsCard", clickWakes},
		{"2_FreeTextReply", freeText},
		{"3_UnauthorisedClick", unauthorised},
		{"4_DoubleAndConcurrentClicks", doubleClicks},
		{"5_RestartBetweenAskAndClick", restartBetween},
		{"6_ForgedAndStaleRequests", forged},
		{"7_ClickAfterRunEnded", afterRunEnded},
		{"8_AnsweredOnAnotherSurface", otherSurface},
		{"9_FormInTwoStepsAcrossRestart", formAcrossRestart},
		{"10_DowntimeRemindsAndDigests", downtime},
		{"11_PeopleByName", peopleByName},
		{"12_QuorumOfTwo", quorumOfTwo},
		{"13_DMClickAndReminders", dmAndReminders},
		{"14_EditBeforeApproving", editBeforeApproving},
		{"15_StandingApprovalFromCard", standingFromCard},
		{"16_BatchOnOneCard", batchOnOneCard},
		{"17_EveryActByName", everyActByName},
	} {
		t.Run(s.name, func(t *testing.T) {
			w := &world{t: t, d: d, clock: core.NewSimClock(epoch)}
			w.use(d.Start(t, w.clock))
			s.run(t, w)
		})
	}
}

// world is one scenario's program, clients and clock.
type world struct {
	t     *testing.T
	d     Driver
	clock *core.SimClock
	prog  Program
	agent *client.Client
	ops   *client.Client
}

func (w *world) use(p Program) {
	w.prog = p
	w.agent = client.New(p.URL, p.AgentToken)
	w.ops = client.New(p.URL, p.OperatorToken)
}

// shown is the name cards give u: Allowed and Allowed2 are configured
// people (see TeamRoute), shown by the name the operator gave them on
// every route; anyone else by their platform name.
func (w *world) shown(u User) string {
	switch u.ID {
	case w.d.Allowed().ID:
		return TeamAlice
	case w.d.Allowed2().ID:
		return TeamBob
	}
	return u.Name
}

// apiID is u's id as the API shows it to operators: a one-way door's
// recipient by the door alone (client.OperatorView), anyone else by
// their platform id.
func (w *world) apiID(u User) string {
	if sf := w.d.Surface(); sf.RoomIsPersonal() {
		return core.RecipientLabel(sf)
	}
	return u.ID
}

func (w *world) restart() { w.use(w.d.Restart(w.t, nil)) }

func (w *world) ask(req client.AskRequest) *client.AgentQuestion {
	w.t.Helper()
	return w.askOn("ops", req)
}

func (w *world) askOn(route string, req client.AskRequest) *client.AgentQuestion {
	w.t.Helper()
	req.Route = route
	if req.RunID == "" {
		req.RunID = "run-1"
	}
	if req.Reversibility == "" {
		req.Reversibility = core.HardToReverse
	}
	q, err := w.agent.Ask(w.t.Context(), req)
	if err != nil {
		w.t.Fatalf("ask: %v", err)
	}
	return q
}

// wait starts the agent's long poll, as an agent blocked on its tool call.
func (w *world) wait(id core.QuestionID) <-chan *client.WaitResponse {
	out := make(chan *client.WaitResponse, 1)
	go func() {
		ctx, cancel := context.WithTimeout(w.t.Context(), 30*time.Second)
		defer cancel()
		res, err := w.agent.Wait(ctx, id)
		if err != nil && w.t.Context().Err() == nil { // a test already over has nobody to tell
			w.t.Errorf("wait %s: %v", id, err)
		}
		out <- res
	}()
	return out
}

func (w *world) woken(ch <-chan *client.WaitResponse) *client.WaitResponse {
	w.t.Helper()
	select {
	case res := <-ch:
		if res == nil {
			w.t.Fatal("the wait failed")
		}
		return res
	case <-time.After(30 * time.Second):
		w.t.Fatal("the agent was never woken")
	}
	return nil
}

func (w *world) get(id core.QuestionID) *client.Question {
	w.t.Helper()
	q, err := w.ops.Get(w.t.Context(), id)
	if err != nil {
		w.t.Fatalf("get %s: %v", id, err)
	}
	return q
}

// events returns the kinds of one question's events.
func (w *world) events(id core.QuestionID) []core.EventKind {
	w.t.Helper()
	evs, err := w.ops.Events(w.t.Context(), 0)
	if err != nil {
		w.t.Fatal(err)
	}
	return coretest.Kinds(coretest.OfQuestion(evs, id))
}

func count(kinds []core.EventKind, k core.EventKind) int {
	n := 0
	for _, x := range kinds {
		if x == k {
			n++
		}
	}
	return n
}

// card waits for the question's card as first posted.
func (w *world) card(id core.QuestionID) Card {
	return w.d.Card(w.t, id, func(c Card) bool { return len(c.Buttons) > 0 })
}

// closedCard waits until the card shows the outcome with every button
// gone.
func (w *world) closedCard(id core.QuestionID, mustShow ...string) Card {
	return w.d.Card(w.t, id, func(c Card) bool {
		if len(c.Buttons) != 0 {
			return false
		}
		for _, s := range mustShow {
			if !strings.Contains(c.Text, s) {
				return false
			}
		}
		return true
	})
}

// button finds the button whose ref decodes to the wanted action and
// indexes.
func (w *world) button(c Card, action core.RefAction, item, option int) Button {
	w.t.Helper()
	for _, b := range c.Buttons {
		r, err := core.DecodeRef(b.Value)
		if err == nil && r.Action == action && r.Item == item && (action != core.RefOption || r.Option == option) {
			return b
		}
	}
	w.t.Fatalf("card has no %c button for item %d option %d: %+v", action, item, option, c.Buttons)
	return Button{}
}

func decision() client.AskRequest {
	return client.AskRequest{Kind: core.KindDecision, Question: "Which database for the ledger?", Context: "Write-heavy, 2 TB.",
		ToolCallID: "toolu_ledger", Labels: core.Labels{Project: "billing", Task: "ledger"},
		Options: []core.Option{
			{ID: "pg", Title: "PostgreSQL", Writeup: "Known; sharding later is work.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Scales out; queries are constrained."},
		}}
}

// 1. ask, the card appears, a click, the agent wakes with the answer, and
// every card is edited.
func clickWakes(t *testing.T, w *world) {
	q := w.ask(decision())
	waiting := w.wait(q.ID)
	c := w.card(q.ID)
	for _, s := range []string{"Which database for the ledger?", "PostgreSQL", "DynamoDB", card.HardToReverseMarker, "billing"} {
		if !strings.Contains(c.Text, s) {
			t.Fatalf("card does not show %q:\n%s", s, c.Text)
		}
	}
	u := w.d.Allowed()
	w.d.Click(t, u, c, w.button(c, core.RefOption, -1, 1))
	res := w.woken(waiting)
	if res.State != core.StateAnswered || res.Resume == nil || res.Resume.Structured.ChosenOptionID != "ddb" || res.ToolCallID != "toolu_ledger" {
		t.Fatalf("agent woke with %+v", res)
	}
	if !strings.Contains(res.Resume.Text, "Scales out; queries are constrained.") {
		t.Fatalf("the agent did not get the chosen write-up:\n%s", res.Resume.Text)
	}
	w.closedCard(q.ID, w.shown(u), "DynamoDB")
}

// 2. a free-text answer in the thread or reply.
func freeText(t *testing.T, w *world) {
	q := w.ask(client.AskRequest{Kind: core.KindClarification, Question: "Which region for the bucket?"})
	waiting := w.wait(q.ID)
	c := w.card(q.ID)
	var b *Button
	for i := range c.Buttons {
		if r, err := core.DecodeRef(c.Buttons[i].Value); err == nil && r.Action == core.RefText {
			b = &c.Buttons[i]
		}
	}
	u := w.d.Allowed()
	w.d.Reply(t, u, c, b, "eu-west-1, next to the app servers")
	res := w.woken(waiting)
	got := w.get(q.ID) // as an operator reads it; the agent gets people's words only fenced
	if res.State != core.StateAnswered || got.Resolution.Answer != "eu-west-1, next to the app servers" ||
		got.Resolution.Decider.ID != w.apiID(u) || !strings.Contains(res.Resume.Text, "eu-west-1, next to the app servers") {
		t.Fatalf("agent woke with %+v; recorded %+v", res.Resume, got.Resolution)
	}
	w.closedCard(q.ID, w.shown(u))
}

// 3. a click from someone who may not answer: nothing changes, the
// clicker gets a private note, and a refused event is recorded.
func unauthorised(t *testing.T, w *world) {
	q := w.ask(decision())
	c := w.card(q.ID)
	note := w.d.Click(t, w.d.Stranger(), c, w.button(c, core.RefOption, -1, 0))
	if !strings.Contains(note, "not one of the people who may answer") {
		t.Fatalf("the stranger was told %q", note)
	}
	if got := w.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("an unauthorised click changed the question: %s", got.State)
	}
	if n := count(w.events(q.ID), core.EventRefused); n != 1 {
		t.Fatalf("%d refused events, want 1", n)
	}
	if again := w.d.Card(t, q.ID, nil); len(again.Buttons) == 0 {
		t.Fatal("the card lost its buttons after a refused click")
	}
}

// 4. a double click, and two people clicking at once: one outcome, and
// the second person is told who won.
func doubleClicks(t *testing.T, w *world) {
	q := w.ask(decision())
	c := w.card(q.ID)
	a, b := w.d.Allowed(), w.d.Allowed2()
	notes := make([]string, 2)
	var wg sync.WaitGroup
	for i, click := range []struct {
		u   User
		opt int
	}{{a, 0}, {b, 1}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			notes[i] = w.d.Click(t, click.u, c, w.button(c, core.RefOption, -1, click.opt))
		}()
	}
	wg.Wait()
	got := w.get(q.ID)
	if got.State != core.StateAnswered {
		t.Fatalf("state %s", got.State)
	}
	winner, loserNote := a, notes[1]
	if got.Resolution.Decider.Person == "bob" { // Allowed2 (TeamRoute); the API shows a one-way door's id as the door alone
		winner, loserNote = b, notes[0]
	}
	if !strings.Contains(loserNote, "Already closed") || !strings.Contains(loserNote, w.shown(winner)) {
		t.Fatalf("the loser was told %q; want who won (%s)", loserNote, w.shown(winner))
	}
	// The winner clicks again: still one outcome, and told so.
	again := w.d.Click(t, winner, c, w.button(c, core.RefOption, -1, 0))
	if !strings.Contains(again, "Already closed") {
		t.Fatalf("a double click was told %q", again)
	}
	if n := count(w.events(q.ID), core.EventAnswered); n != 1 {
		t.Fatalf("%d answered events, want 1", n)
	}
	w.closedCard(q.ID, w.shown(winner))
}

// 5. a restart of askbridge between the ask and the click: the old button
// still works.
func restartBetween(t *testing.T, w *world) {
	q := w.ask(decision())
	c := w.card(q.ID)
	w.restart()
	waiting := w.wait(q.ID)
	w.d.Click(t, w.d.Allowed(), c, w.button(c, core.RefOption, -1, 0))
	if res := w.woken(waiting); res.State != core.StateAnswered || res.Resume.Structured.ChosenOptionID != "pg" {
		t.Fatalf("after restart the agent woke with %+v", res)
	}
	w.closedCard(q.ID, w.shown(w.d.Allowed()))
}

// 6. a forged signature and a stale timestamp: a 401, and no state change.
func forged(t *testing.T, w *world) {
	q := w.ask(decision())
	c := w.card(q.ID)
	b := w.button(c, core.RefOption, -1, 0)
	for _, f := range []Forgery{BadSignature, StaleTimestamp} {
		status, applies := w.d.Forge(t, w.d.Allowed(), c, b, f)
		if f == BadSignature && !applies {
			t.Fatal("every platform checks its requests")
		}
		if applies && status != 401 {
			t.Fatalf("forgery %d answered %d, want 401", f, status)
		}
	}
	if got := w.get(q.ID); got.State != core.StateOpen {
		t.Fatalf("a forged click changed the question: %s", got.State)
	}
	if kinds := w.events(q.ID); count(kinds, core.EventRefused) != 0 {
		t.Fatalf("forged requests reached core: %v", kinds)
	}
}

// 7. a click after the run ended: refused, and the clicker is told the
// question expired and why, in the card's own outcome line.
func afterRunEnded(t *testing.T, w *world) {
	q := w.ask(decision())
	c := w.card(q.ID)
	if _, err := w.agent.EndRun(t.Context(), "run-1"); err != nil {
		t.Fatal(err)
	}
	note := w.d.Click(t, w.d.Allowed(), c, w.button(c, core.RefOption, -1, 0))
	if !strings.Contains(note, "Expired on") || !strings.Contains(note, core.ExpiredReason) || !strings.Contains(note, "not recorded") {
		t.Fatalf("the clicker was told %q", note)
	}
	kinds := w.events(q.ID)
	if count(kinds, core.EventExpired) != 1 || count(kinds, core.EventRefused) != 1 {
		t.Fatalf("events %v", kinds)
	}
	w.closedCard(q.ID, "Expired")
}

// 8. a question answered on another surface: this surface's card is edited
// too.
func otherSurface(t *testing.T, w *world) {
	q := w.ask(decision())
	w.card(q.ID)
	if _, err := w.ops.Answer(t.Context(), q.ID, client.AnswerRequest{ChosenOptionID: "pg"}); err != nil {
		t.Fatal(err)
	}
	w.closedCard(q.ID, "PostgreSQL", "via api")
}

// 9. a form with two items answered in two steps, with a restart between
// them.
func formAcrossRestart(t *testing.T, w *world) {
	q := w.ask(client.AskRequest{Kind: core.KindForm, Question: "Release plan", Reversibility: core.Reversible,
		Items: []core.FormItem{
			{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday", Recommended: true}, {ID: "fri", Label: "Friday"}}},
			{ID: "notes", Question: "Release notes?", Options: []core.FormOption{{ID: "short", Label: "Short"}, {ID: "long", Label: "Long"}}},
		}})
	c := w.card(q.ID)
	u := w.d.Allowed()
	w.d.Click(t, u, c, w.button(c, core.RefOption, 0, 1))
	half := w.d.Card(t, q.ID, func(c Card) bool { return strings.Contains(c.Text, "1/2") })
	w.restart()
	if got := w.get(q.ID); got.State != core.StateOpen || len(got.Answers) != 1 || got.Answers[0].OptionID != "fri" {
		t.Fatalf("half-answered form after restart: %s %+v", got.State, got.Answers)
	}
	waiting := w.wait(q.ID)
	w.d.Click(t, u, half, w.button(half, core.RefOption, 1, 0))
	res := w.woken(waiting)
	if res.State != core.StateAnswered || len(res.Resume.Structured.Items) != 2 {
		t.Fatalf("form resume %+v", res.Resume)
	}
	w.closedCard(q.ID, "Friday", "Short")
}

// 10. a downtime longer than the threshold: reminders and one digest are
// posted.
func downtime(t *testing.T, w *world) {
	q1 := w.ask(decision())
	q2 := w.ask(client.AskRequest{Kind: core.KindClarification, Question: "Which region?"})
	w.card(q1.ID)
	w.card(q2.ID)
	w.use(w.d.Restart(t, func() { w.clock.Advance(3 * time.Hour) }))
	posts := w.d.Posts(t, func(ps []Post) bool {
		reminders, digests := 0, 0
		for _, p := range ps {
			if strings.Contains(p.Text, card.ReminderHeading) {
				reminders++
			}
			if strings.Contains(p.Text, card.DigestHeading) {
				digests++
			}
		}
		return reminders >= 2 && digests >= 1
	})
	digests := 0
	for _, p := range posts {
		if strings.Contains(p.Text, card.DigestHeading) {
			digests++
		}
	}
	if digests != 1 {
		t.Fatalf("%d digests posted, want 1", digests)
	}
	for _, id := range []core.QuestionID{q1.ID, q2.ID} {
		if n := count(w.events(id), core.EventReminded); n != 1 {
			t.Fatalf("%s has %d reminded events, want 1", id, n)
		}
	}
}
