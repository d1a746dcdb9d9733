package email_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestLinksExpireByTheServicesClock: an adapter given no clock of its
// own reads the service's, as ntfy's does, so a link expires when its
// question's deadline passes on the clock that set the deadline. The
// service's clock here stands in 2001, long before the wall clock:
// before, the page read the wall clock, and a link of a question still
// open for an hour was already expired.
func TestLinksExpireByTheServicesClock(t *testing.T) {
	clock := core.NewSimClock(time.Date(2001, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceEmail, ID: alice}},
		Deciders: map[core.Surface][]string{core.SurfaceEmail: {alice}},
	}}})
	fake := emailfake.Start(t, emailfake.Options{})
	host, port, _ := strings.Cut(fake.Addr, ":")
	p, _ := strconv.Atoi(port)
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	a, err := email.New(svc, email.Options{Host: host, Port: p, TLS: email.TLSNone, From: "askbridge@bridge.example.test",
		PublicURL: web.URL, Key: []byte(key), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a.Mount(mux)
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Text: "Which region?", Route: "ops",
		Agent: "deploy-bot", RunID: "run-1", Reversibility: core.HardToReverse, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: alice, Delivery: "d1"}); err != nil {
		t.Fatal(err)
	}
	box := fake.Mailbox(alice)
	if len(box) != 1 || len(box[0].Links) == 0 {
		t.Fatalf("alice's mailbox: %+v", box)
	}
	u := box[0].Links[0]
	if status, body := do(t, http.MethodGet, u, nil); status != http.StatusOK || strings.Contains(body, "Link expired") {
		t.Fatalf("a link of a question open for another hour on the service's clock: %d\n%s", status, body)
	}
	clock.Advance(time.Hour)
	if status, body := do(t, http.MethodGet, u, nil); status != http.StatusGone || !strings.Contains(body, "Link expired") {
		t.Fatalf("a link whose deadline has passed on the service's clock: %d\n%s", status, body)
	}
}
