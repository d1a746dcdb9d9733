package actionlink_test

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/rs/zerolog"
)

// boss decides on oncall alone: deploy's questions only once escalated.
const (
	boss      = "boss@example.test"
	bossTopic = "s3cret-topic-of-boss"
)

// newEscalating is a bridge whose approvals are reversible and offer both
// standing approvals, asked on deploy (alice's) and escalated to oncall
// (boss's) at their deadline.
func newEscalating(t *testing.T) *bridge {
	clock := core.NewSimClock(epoch)
	svc := coretest.Service(t, coretest.OpenStore(t), coretest.Options{Clock: clock, Routes: map[string]core.Route{
		"deploy": {Deciders: map[core.Surface][]string{core.SurfaceEmail: {alice}, core.SurfaceNtfy: {aliceTopic}},
			EscalateTo: "oncall", StandingHours: 8},
		"oncall": {Deciders: map[core.Surface][]string{core.SurfaceEmail: {boss}, core.SurfaceNtfy: {bossTopic}}},
	}})
	b := &bridge{t: t, svc: svc, clock: clock, s: signer(t, "server key of the test, 32 bytes")}
	mux := http.NewServeMux()
	mux.Handle("/email/act/", &actionlink.Page{Svc: svc, Signer: b.s, Surface: core.SurfaceEmail, Prefix: "/email/act/",
		ConfirmAddress: true, Now: clock.Now, Log: zerolog.Nop()})
	mux.Handle("/ntfy/act/", &actionlink.Page{Svc: svc, Signer: b.s, Surface: core.SurfaceNtfy, Prefix: "/ntfy/act/",
		Now: clock.Now, Log: zerolog.Nop()})
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

// escalated asks an editable approval of an agent of its own (so that
// no standing approval granted before covers it) and escalates it.
func (b *bridge) escalated(n int) *core.Question {
	b.t.Helper()
	return coretest.Escalated(b.t, b.svc, b.clock, core.AskInput{Kind: core.KindApproval, Text: "Restart web?", Tool: "svc.restart",
		Arguments: []byte(`{"svc":"web"}`), Editable: &core.Editable{All: true}, Route: "deploy", Agent: core.AgentID(fmt.Sprint("bot-", n)),
		RunID: "run-1", Reversibility: core.Reversible, Timeout: time.Minute, OnTimeout: core.OnTimeoutEscalate})
}

// menuLabels are the choices the ntfy menu link of q lists for topic.
func (b *bridge) menuLabels(q *core.Question, topic string) []string {
	b.t.Helper()
	shown := card.New(q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost})
	menu, err := b.s.MenuLink(q, shown, core.SurfaceNtfy, topic, b.srv.URL+"/ntfy/act/")
	if err != nil {
		b.t.Fatal(err)
	}
	status, body := call(b.t, http.MethodGet, menu, nil)
	if status != http.StatusOK {
		b.t.Fatalf("%s's menu: %d\n%s", topic, status, body)
	}
	var labels []string
	for _, l := range href.FindAllStringSubmatch(body, -1) {
		labels = append(labels, html.UnescapeString(l[2]))
	}
	return labels
}

// TestALinksPageOffersWhatItsSubmitAccepts: once a question escalated,
// boss may approve, deny, edit or decline it, but only deploy's own deciders grant
// its standing approvals. Each action's page offers its form, and each
// menu lists it, exactly when confirming it records it: for alice,
// everything; for boss, all but the standing approvals, whose link says
// at once why not, in the chokepoint's words, and lists what he may do
// instead. Before, boss was shown the standing approval's form and
// refused only once he confirmed it.
func TestALinksPageOffersWhatItsSubmitAccepts(t *testing.T) {
	b := newEscalating(t)
	standingRun, standingAgent := card.LabelStandingRun, fmt.Sprintf(card.LabelStandingAgent, 8)
	labels := []string{card.LabelApprove, card.LabelDeny, card.LabelEditApprove, card.LabelDecline, standingRun, standingAgent}
	n := 0
	for _, who := range []struct{ to, topic string }{{alice, aliceTopic}, {boss, bossTopic}} {
		for _, label := range labels {
			n++
			q := b.escalated(n)
			listed := slices.Contains(b.menuLabels(q, who.topic), actionlink.LinkLabel(label))
			u := b.link(q, who.to, label)
			status, page := call(t, http.MethodGet, u, nil)
			offered := status == http.StatusOK && strings.Contains(page, "Confirm: ")
			if !offered && (status != http.StatusForbidden || strings.Contains(page, "<form")) {
				t.Errorf("%s's %q page: %d, want its form or a 403 without one\n%s", who.to, label, status, page)
			}
			form := url.Values{"address": {who.to}}
			if label == card.LabelEditApprove {
				form.Set("text", `{"svc":"api"}`)
			}
			status, posted := call(t, http.MethodPost, u, form)
			accepted := status == http.StatusOK && !b.state(q.ID).Open()
			if offered != accepted || listed != accepted {
				t.Errorf("%s, %q: page offers it %v, menu lists it %v, confirming it records it %v (%d)\n%s\n%s",
					who.to, label, offered, listed, accepted, status, page, posted)
			}
			mayGrant := who.to == alice
			if want := mayGrant || (label != standingRun && label != standingAgent); accepted != want {
				t.Errorf("%s, %q: recorded %v, want %v", who.to, label, accepted, want)
			}
			if !offered && !strings.Contains(noteOf(t, page), "standing approval") {
				t.Errorf("%s's refused %q page does not say why: %q", who.to, label, noteOf(t, page))
			}
			if !offered {
				var instead []string
				for _, l := range href.FindAllStringSubmatch(page, -1) {
					instead = append(instead, html.UnescapeString(l[2]))
				}
				if !slices.Contains(instead, card.LabelApprove) || slices.Contains(instead, standingRun) || slices.Contains(instead, standingAgent) {
					t.Errorf("%s's refused %q page offers instead %q", who.to, label, instead)
				}
			}
		}
	}
}
