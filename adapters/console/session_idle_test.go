package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

// A tab left open on a busy console fetches rows and its question's part
// whenever the log moves, with nobody at it. Those fetches are no use of
// the session: it ends after the idle time since its person's last act,
// as the README says, however busy the page.
func TestBackgroundFetchesLeaveAnUnattendedSessionToLapse(t *testing.T) {
	const idle = time.Hour
	e := newSimEnv(t, nil, func(o *console.Options) { o.Idle = idle; o.MaxAge = 24 * time.Hour })
	b := e.signedIn(opAlice)
	control := e.signedIn(opBob) // signed in at the same time; its page fetches nothing
	for i := range 5 {
		e.clock.Advance(40 * time.Minute)
		q := e.ask(core.AskInput{Text: "Background question"})
		// What console.js's changed() fetches as the stream reports the ask.
		r := b.get("/rows/" + string(q.ID))
		if i == 0 && r.status != http.StatusOK {
			t.Fatalf("row fetch while the session was live: %d", r.status)
		}
		if p := b.get("/q/" + string(q.ID) + "/part"); p.status != r.status {
			t.Fatalf("part fetch %d: %d, the row's %d", i, p.status, r.status)
		}
		if r.status == http.StatusUnauthorized && strings.Contains(r.body, `id="signin"`) {
			t.Fatal("a background fetch got the sign-in page, not a bare 401")
		}
	}
	// 200 minutes after the person last did anything.
	if r := control.get("/"); !strings.Contains(r.body, `id="signin"`) {
		t.Fatal("control: an idle session did not lapse on the simulated clock")
	}
	if r := b.get("/"); !strings.Contains(r.body, `id="signin"`) {
		t.Fatalf("a session unused for %s (idle time %s) is still live: the page's own fetches renewed it", 200*time.Minute, idle)
	}
}

// "While you were away" counts from the person's last act, not from the
// last time their open page fetched a row by itself.
func TestBackgroundFetchesRecordNoVisit(t *testing.T) {
	e := newSimEnv(t, nil, func(o *console.Options) { o.Idle = time.Hour; o.MaxAge = 24 * time.Hour })
	b := e.signedIn(opAlice) // 09:00
	e.clock.Advance(10 * time.Minute)
	if r := b.get("/"); r.status != http.StatusOK { // 09:10, the last act
		t.Fatalf("inbox: %d", r.status)
	}
	e.clock.Advance(20 * time.Minute)
	q := e.ask(core.AskInput{Text: "Asked while alice looked away"}) // 09:30
	e.clock.Advance(time.Minute)
	if r := b.get("/rows/" + string(q.ID)); r.status != http.StatusOK { // 09:31, the page alone
		t.Fatalf("row fetch: %d", r.status)
	}
	e.clock.Advance(3 * time.Hour)
	back := e.browser(e.srv)
	if r := back.signIn(opAlice.secret); r.status != http.StatusSeeOther {
		t.Fatalf("sign in again: %d", r.status)
	}
	r := back.get("/")
	_, banner, ok := strings.Cut(r.body, `id="away"`)
	if !ok {
		t.Fatal("no \"while you were away\" banner after the session lapsed")
	}
	banner, _, _ = strings.Cut(banner, "</aside>")
	if !strings.Contains(banner, "Since 2026-11-30 09:10 UTC: 1 asked") {
		t.Fatalf("the banner does not count from the last act (09:10), with the question asked at 09:30:%s", banner)
	}
}
