package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/slack"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// People of another organisation, met in a channel shared with it (Slack
// Connect): their user.team_id is their own workspace's.
const vendorTeam = "T0VENDORORG"

var (
	vendor       = slackfake.User{ID: "U0VENDOR", Name: "Vendor", Team: vendorTeam}
	vendorListed = slackfake.User{ID: "U0VLISTED", Name: "Listed", Team: vendorTeam}
	vendorGroup  = slackfake.User{ID: "U0VGROUP", Name: "Grouped", Team: vendorTeam}
	vendorPerson = slackfake.User{ID: "U0VPERSON", Name: "Erin", Team: vendorTeam}
)

// newStarEnv is the adapter on a route open to "*" on Slack, which also
// names vendorListed, the user group and the person erin (vendorPerson);
// before, if set, is done to the fake before the adapter runs.
func newStarEnv(t *testing.T, before func(*slackfake.Fake)) *env {
	t.Helper()
	svc, _ := coretest.Open(t, coretest.Options{Routes: map[string]core.Route{
		"ops": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: room}},
			Deciders: map[core.Surface][]string{core.SurfaceSlack: {"*", vendorListed.ID, "role:" + group}},
			People:   []string{core.PersonPrefix + "erin"}},
	}, People: map[string]core.Person{"erin": {IDs: map[core.Surface][]string{core.SurfaceSlack: {vendorPerson.ID}}}}})
	fake := slackfake.New()
	for _, u := range []slackfake.User{alice, mallory, vendor, vendorListed, vendorGroup, vendorPerson} {
		fake.AddUser(u)
	}
	fake.SetGroup(group, vendorGroup.ID)
	if before != nil {
		before(fake)
	}
	a, err := slack.New(svc, slack.Options{BotToken: "xoxb-test", SigningSecret: secret, APIURL: strings.TrimSuffix(fake.APIURL(), "/")})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() { _ = loops.Deliver(ctx, svc, a, loops.DeliverOptions{Block: 20 * time.Millisecond}) })
	t.Cleanup(func() { cancel(); wg.Wait(); srv.Close(); fake.Close() })
	return &env{t: t, fake: fake, svc: svc, a: a, srv: srv}
}

const notADecider = "You are not one of the people who may answer this question. Nothing was recorded."

// TestStarMeansOurWorkspace: on Slack, "*" lets in the members of the
// bot's own workspace only. A user of another organisation in a shared
// channel is refused as not a decider, on a click, a thread reply and an
// edit modal alike, unless the route names them: by id, by a user group
// or as a person. Before, "*" let them answer.
func TestStarMeansOurWorkspace(t *testing.T) {
	e := newStarEnv(t, nil)
	approval := func() (*core.Question, slackfake.Message) {
		q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop prod?", Tool: "sql",
			Arguments: json.RawMessage(`{"q":"drop"}`), Editable: &core.Editable{Keys: []string{"q"}}})
		return q, e.card(q.ID)
	}

	q, m := approval()
	if status := e.click(vendor, m, button(t, m, core.RefApprove, -1, 0)); status != 200 {
		t.Fatalf("click answered %d", status)
	}
	if note := e.note(vendor, 0); note != notADecider {
		t.Fatalf("the other workspace's clicker was told %q", note)
	}
	sub := slackfake.SubmitPayload(vendor, editView(t, q, m.Channel), map[string]string{"arguments": `{"q":"select 1"}`})
	status, body, err := slackfake.Click(e.srv.URL+slack.InteractivityPath, secret, sub).Send(t.Context())
	if err != nil || status != 200 || !strings.Contains(body, "You are not one of the people") {
		t.Fatalf("the other workspace's edit: %d %q %v", status, body, err)
	}
	c := e.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	cm := e.card(c.ID)
	e.reply(vendor, cm, "eu-west-1", 0)
	if note := e.note(vendor, 1); note != notADecider {
		t.Fatalf("the other workspace's replier was told %q", note)
	}
	if e.get(q.ID).State != core.StateOpen || e.get(c.ID).State != core.StateOpen {
		t.Fatal("a user of another workspace answered through \"*\"")
	}
	// Refused by core, which records it, as every refusal (law 8).
	evs, err := e.svc.QuestionEvents(t.Context(), q.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, ev := range evs {
		if ev.Kind == core.EventRefused {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d refused events for the other workspace's click and edit; want 2", refused)
	}

	// Named by id, by a group, as a person; or of our own workspace.
	for _, u := range []slackfake.User{vendorListed, vendorGroup, vendorPerson, mallory} {
		q, m := approval()
		e.click(u, m, button(t, m, core.RefApprove, -1, 0))
		if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != u.ID {
			t.Fatalf("%s: %s %+v", u.Name, got.State, got.Resolution)
		}
	}
}

// TestNamedUserNeedsNoWorkspace: a user of another workspace whom the
// route names counts while auth.test fails (the bot's workspace unknown):
// which workspace is ours matters only to those "*" alone lets in, and a
// member of ours let in by "*" alone is told to try again. Before, the
// workspace was asked of auth.test first, and the named user was told
// to try again too.
func TestNamedUserNeedsNoWorkspace(t *testing.T) {
	e := newStarEnv(t, func(f *slackfake.Fake) {
		for range 3 { // Run's auth.test, and one more for each click that asks
			f.FailNext("auth.test", slackfake.Failure{Error: "internal_error"})
		}
	})
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Drop prod?", Tool: "sql", Arguments: json.RawMessage(`{"q":"drop"}`)})
	m := e.card(q.ID)
	e.click(mallory, m, button(t, m, core.RefApprove, -1, 0))
	if note := e.note(mallory, 0); strings.Contains(note, "Recorded") || e.get(q.ID).State != core.StateOpen {
		t.Fatalf("a member let in by \"*\" alone, our workspace unknown, was told %q", note)
	}
	e.click(vendorListed, m, button(t, m, core.RefApprove, -1, 0))
	if got := e.get(q.ID); got.State != core.StateAnswered || got.Resolution.Decider.ID != vendorListed.ID {
		t.Fatalf("the named user's approve: %s %+v, told %q", got.State, got.Resolution, e.note(vendorListed, 0))
	}
}
