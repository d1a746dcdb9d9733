package console_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// deadlineThen finds what a card's deadline line says the deadline does.
var deadlineThen = regexp.MustCompile(`<dt>Deadline</dt><dd><time [^>]*>[^<]*</time>(?: \(<time [^>]*>[^<]*</time>\))?, then ([^<]+)</dd>`)

// checkThen fails unless q's page and row both say "then " + want.
func checkThen(t *testing.T, c *browser, when string, q *core.Question, want string) {
	t.Helper()
	for _, path := range []string{"/q/" + string(q.ID), "/rows/" + string(q.ID)} {
		m := deadlineThen.FindStringSubmatch(c.get(path).body)
		if m == nil {
			t.Fatalf("%s, %s: no deadline line", when, path)
		}
		if m[1] != want {
			t.Errorf("%s, %s: the deadline says %q, want %q", when, path, "then "+m[1], "then "+want)
		}
	}
}

// TestTheDeadlineSaysWhatItWillDoNext: a card says what its deadline
// does, and said the question's timeout policy whatever had become of
// it: "then escalate" on a question already escalated, "then reask" on
// one asked again as often as it may be. Core escalates once and asks
// again MaxReasks times; the next deadline of either closes it as timed
// out, so the card says "then it times out" then.
func TestTheDeadlineSaysWhatItWillDoNext(t *testing.T) {
	routes := openRoutes()
	esc := routes[core.DefaultRoute]
	esc.EscalateTo = "oncall"
	routes["esc"] = esc
	routes["oncall"] = routes[core.DefaultRoute]
	e := newEnv(t, routes)
	alice := e.signedIn(opAlice)
	escalating := e.ask(core.AskInput{Text: "Rotate the keys?", Route: "esc", Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	reasking := e.ask(core.AskInput{Text: "Which region?", Timeout: time.Hour, OnTimeout: core.OnTimeoutReask, MaxReasks: 2})
	check := func(when string, q *core.Question, want string) {
		t.Helper()
		checkThen(t, alice, when, q, want)
	}
	check("asked", escalating, "it is escalated to more deciders")
	check("asked", reasking, "it is asked again")
	for i, want := range []struct{ esc, reask string }{{"it times out", "it is asked again"}, {"it times out", "it times out"}} {
		e.clock.Advance(time.Hour + time.Minute)
		if _, err := e.svc.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := e.get(escalating.ID); i == 0 && (!got.Open() || got.Renotified != 1) {
			t.Fatalf("the escalating question was not escalated: %s, %d", got.State, got.Renotified)
		}
		if got := e.get(reasking.ID); !got.Open() || got.Renotified != i+1 {
			t.Fatalf("deadline %d: the reasking question was not asked again: %s, %d", i+1, got.State, got.Renotified)
		}
		if e.get(escalating.ID).Open() {
			check("after deadline "+strconv.Itoa(i+1), escalating, want.esc)
		}
		check("after deadline "+strconv.Itoa(i+1), reasking, want.reask)
	}
}

// TestADeadlineThatClosesSaysItTimesOut: the deadline of a question that
// will close at it (the deny policy, the default) says it times out, by
// kind, never "deny": before, every kind's said "then deny", which on a
// clarification, a decision or a form reads as a person's denial, and
// nobody denies anything (law 12). An approval's says its call is not
// made, as its decline button does; a batch's that no call not already
// approved is.
func TestADeadlineThatClosesSaysItTimesOut(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.signedIn(opAlice)
	for _, c := range []struct {
		q    *core.Question
		want string
	}{
		{e.ask(core.AskInput{Text: "Which region?"}), "it times out"},
		{e.ask(core.AskInput{Kind: core.KindDecision, Text: "Which way?", Options: []core.Option{
			{ID: "a", Title: "Left", Writeup: "one way", Recommended: true}, {ID: "b", Title: "Right", Writeup: "another"}}}), "it times out"},
		{e.ask(core.AskInput{Kind: core.KindForm, Text: "Go?", Items: []core.FormItem{{ID: "go", Question: "Go ahead?",
			Options: []core.FormOption{{ID: "yes", Label: "Yes"}, {ID: "no", Label: "No"}}}}}), "it times out"},
		{e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop it?", Tool: "sql.exec", Arguments: []byte(`{"sql":"DROP TABLE t"}`)}),
			"it times out, without the call"},
		{e.batch(), "it times out, making no call that was not approved"},
	} {
		checkThen(t, alice, string(c.q.Kind)+" asked", c.q, c.want)
	}
}
