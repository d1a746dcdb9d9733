package email_test

import (
	"fmt"
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
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAnEscalationOnlyRecipientIsMailedNoStandingLink: boss, whom only
// deploy's escalation lets in, may approve the escalated call but not
// grant deploy a standing approval (core.Service.ActRefusal), so his
// mail carries no standing-approval link, and every link it carries
// opens a form rather than a refusal. Alice, deploy's own decider, is
// mailed every link, both standing approvals among them; so is carol,
// whom no route lets in (her page refuses her at once, and her attempt
// is recorded). Before, boss was mailed both standing-approval links,
// each refused when opened.
func TestAnEscalationOnlyRecipientIsMailedNoStandingLink(t *testing.T) {
	const boss = "boss@example.test"
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"deploy": {Rooms: []core.Room{{Surface: core.SurfaceEmail, ID: alice}, {Surface: core.SurfaceEmail, ID: carol}},
			Deciders: map[core.Surface][]string{core.SurfaceEmail: {alice}}, EscalateTo: "oncall", StandingHours: 8},
		"oncall": {Rooms: []core.Room{{Surface: core.SurfaceEmail, ID: boss}},
			Deciders: map[core.Surface][]string{core.SurfaceEmail: {boss}}},
	}})
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
	q := coretest.Escalated(t, svc, clock, core.AskInput{Kind: core.KindApproval, Text: "Restart web?", Tool: "restart", Arguments: []byte(`{"svc":"web"}`),
		Route: "deploy", Agent: "deploy-bot", RunID: "run-1", Reversibility: core.Reversible, Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	standing := []string{card.LabelStandingRun, fmt.Sprintf(card.LabelStandingAgent, 8)}
	for _, c := range []struct {
		to       string
		kind     core.DeliveryKind
		standing bool
		status   int // of opening each link
	}{{alice, core.DeliverPost, true, http.StatusOK}, {boss, core.DeliverEscalate, false, http.StatusOK}, {carol, core.DeliverPost, true, http.StatusForbidden}} {
		if _, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceEmail, Room: c.to, Kind: c.kind, Delivery: "d-" + c.to}); err != nil {
			t.Fatal(err)
		}
		box := fake.Mailbox(c.to)
		if len(box) != 1 {
			t.Fatalf("%s has %d messages", c.to, len(box))
		}
		m := box[0]
		for _, label := range standing {
			if got := strings.Contains(m.Text, label+":"); got != c.standing {
				t.Errorf("%s's mail has a %q link: %v, want %v:\n%s", c.to, label, got, c.standing, m.Text)
			}
		}
		want := 3 // approve, deny, decline
		if c.standing {
			want += len(standing)
		}
		if len(m.Links) != want {
			t.Errorf("%s's mail has %d links, want %d:\n%s", c.to, len(m.Links), want, m.Text)
		}
		for _, u := range m.Links {
			if status, body := do(t, http.MethodGet, u, nil); status != c.status || strings.Contains(body, "<form") != (c.status == http.StatusOK) {
				t.Errorf("%s opens a link of their mail: %d\n%s", c.to, status, body)
			}
		}
	}
}
