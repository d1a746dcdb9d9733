package console_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// TestTheDeadlineSaysWhatItWillDoNext: a card says what its deadline
// does, and said the question's timeout policy whatever had become of
// it: "then escalate" on a question already escalated, "then reask" on
// one asked again as often as it may be. Core escalates once and asks
// again MaxReasks times; the next deadline of either closes it as timed
// out, as the deny policy does, so the card says "then deny" then.
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
	then := regexp.MustCompile(`<dt>Deadline</dt><dd><time [^>]*>[^<]*</time>(?: \(<time [^>]*>[^<]*</time>\))?, then ([a-z]+)</dd>`)
	check := func(when string, q *core.Question, want string) {
		t.Helper()
		for _, path := range []string{"/q/" + string(q.ID), "/rows/" + string(q.ID)} {
			m := then.FindStringSubmatch(alice.get(path).body)
			if m == nil {
				t.Fatalf("%s, %s: no deadline line", when, path)
			}
			if m[1] != want {
				t.Errorf("%s, %s: the deadline says %q, want %q", when, path, "then "+m[1], "then "+want)
			}
		}
	}
	check("asked", escalating, "escalate")
	check("asked", reasking, "reask")
	for i, want := range []struct{ esc, reask string }{{"deny", "reask"}, {"deny", "deny"}} {
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
