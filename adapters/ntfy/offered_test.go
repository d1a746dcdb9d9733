package ntfy_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/adapters/ntfy"
	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestAnEscalationOnlyTopicIsSentNoStandingButton: the boss topic, which
// only deploy's escalation lets in, may approve the escalated call but
// not grant deploy a standing approval (core.Service.ActRefusal), so its
// notification is built from the three choices it may take (approve,
// deny, decline), which fit as buttons of their own, with no "More
// choices" left over; the deploy topic, the route's own decider, gets
// every choice, its menu listing both standing approvals. Before, boss's
// was built from all five, so it showed two and a menu button.
func TestAnEscalationOnlyTopicIsSentNoStandingButton(t *testing.T) {
	const own, boss = "deploy-topic", "boss-topic"
	clock := core.NewSimClock(start)
	svc, _ := coretest.Open(t, coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"deploy": {Rooms: []core.Room{{Surface: core.SurfaceNtfy, ID: own}},
			Deciders: map[core.Surface][]string{core.SurfaceNtfy: {own}}, EscalateTo: "oncall", StandingHours: 8},
		"oncall": {Rooms: []core.Room{{Surface: core.SurfaceNtfy, ID: boss}},
			Deciders: map[core.Surface][]string{core.SurfaceNtfy: {boss}}},
	}})
	fake := ntfyfake.Start(t, token)
	mux := http.NewServeMux()
	web := httptest.NewServer(mux)
	t.Cleanup(web.Close)
	a, err := ntfy.New(svc, ntfy.Options{ServerURL: fake.URL, Token: token, PublicURL: web.URL, Key: []byte(key), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a.Mount(mux)
	signer, _ := actionlink.NewSigner([]byte(key))
	q := coretest.Escalated(t, svc, clock, core.AskInput{Kind: core.KindApproval, Text: "Restart web?", Tool: "restart", Arguments: []byte(`{"svc":"web"}`),
		Route: "deploy", Agent: "deploy-bot", RunID: "run-1", Reversibility: core.Reversible, Timeout: time.Hour, OnTimeout: core.OnTimeoutEscalate})
	standing := []string{card.LabelStandingRun, fmt.Sprintf(card.LabelStandingAgent, 8)}
	for _, c := range []struct {
		topic string
		kind  core.DeliveryKind
		own   bool
	}{{own, core.DeliverPost, true}, {boss, core.DeliverEscalate, false}} {
		if _, err := a.Post(t.Context(), q, core.MessageRef{Surface: core.SurfaceNtfy, Room: c.topic, Kind: c.kind, Delivery: "d-" + c.topic}); err != nil {
			t.Fatal(err)
		}
		ms := fake.Messages(c.topic)
		if len(ms) != 1 {
			t.Fatalf("%s has %d notifications", c.topic, len(ms))
		}
		m := ms[0]
		var acts []core.RefAction
		more := false
		for _, b := range m.Actions {
			if b.Label == ntfy.MoreLabel {
				more = true
				continue
			}
			cl, err := signer.Verify(strings.TrimPrefix(b.URL, web.URL+ntfy.ActPath), clock.Now())
			if err != nil {
				t.Fatalf("%s's %q button: %v", c.topic, b.Label, err)
			}
			acts = append(acts, cl.Ref.Action)
		}
		want := []core.RefAction{core.RefApprove, core.RefDeny, core.RefDecline}
		if c.own {
			want = want[:2] // and the menu, for the rest
		}
		if !slices.Equal(acts, want) || more != c.own {
			t.Errorf("%s's buttons: %c (more choices %v), want %c (more choices %v)", c.topic, acts, more, want, c.own)
		}
		res, err := http.Get(m.Click)
		if err != nil {
			t.Fatal(err)
		}
		menu, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s's menu: %d, %v", c.topic, res.StatusCode, err)
		}
		for _, label := range standing {
			if got := strings.Contains(string(menu), html.EscapeString(label)); got != c.own {
				t.Errorf("%s's menu lists %q: %v, want %v", c.topic, label, got, c.own)
			}
		}
	}
}
