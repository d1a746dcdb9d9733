package actionlink_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/rs/zerolog"
)

// TestPageGivenNoClockReadsItsServices: a page whose door gave it no
// clock reads its service's, the clock that set the deadline its links
// expire with, so no door can leave its page on another. The service's
// clock here stands in 2001, long before the wall clock: before, such a
// page read the wall clock, and a link of a question open for another
// hour was already expired.
func TestPageGivenNoClockReadsItsServices(t *testing.T) {
	clock := core.NewSimClock(time.Date(2001, 3, 1, 9, 0, 0, 0, time.UTC))
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Clock: clock, Routes: map[string]core.Route{"ops": {
		Rooms:    []core.Room{{Surface: core.SurfaceEmail, ID: alice}},
		Deciders: map[core.Surface][]string{core.SurfaceEmail: {alice}},
	}}})
	s := signer(t, "server key of the test, 32 bytes")
	page := &actionlink.Page{Svc: svc, Signer: s, Surface: core.SurfaceEmail, Prefix: "/email/act/", Log: zerolog.Nop()}
	srv := httptest.NewServer(page)
	t.Cleanup(srv.Close)
	if got, want := page.Clock(), svc.Now(); !got.Equal(want) {
		t.Fatalf("the page's clock reads %s, the service's %s", got, want)
	}
	q, err := svc.Ask(t.Context(), core.AskInput{Kind: core.KindClarification, Text: "Which region?", Route: "ops",
		Agent: "deploy-bot", RunID: "run-1", Reversibility: core.HardToReverse, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	view := card.New(q, core.MessageRef{Surface: core.SurfaceEmail, Room: alice, Kind: core.DeliverPost})
	links, err := s.Links(q, view, core.SurfaceEmail, alice, srv.URL+"/email/act/")
	if err != nil || len(links) == 0 {
		t.Fatalf("links: %+v, %v", links, err)
	}
	u := links[0].URL
	if status, body := call(t, http.MethodGet, u, nil); status != http.StatusOK || strings.Contains(body, "Link expired") {
		t.Fatalf("a link of a question open for another hour on the service's clock: %d\n%s", status, body)
	}
	clock.Advance(time.Hour)
	if status, body := call(t, http.MethodGet, u, nil); status != http.StatusGone || !strings.Contains(body, "Link expired") {
		t.Fatalf("a link whose deadline has passed on the service's clock: %d\n%s", status, body)
	}
}
