package app

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/core"
)

// TestSlackScenarios runs the shared end-to-end scenarios against the real
// program with its Slack adapter on, talking to a local fake of Slack.
// Clicks and replies arrive the way Slack sends them over HTTP: signed
// Interactivity and Events API requests built from real payloads.
func TestSlackScenarios(t *testing.T) {
	t.Parallel() // mostly waits on the room's send budget
	adaptertest.Run(t, &slackDriver{})
}

const (
	slackRoom   = "C0ASKOPS"
	slackSecret = "slack-signing-secret-for-tests"
	slackGroup  = "S0DEPLOY" // Allowed2 decides through this user group
	slackWait   = 15 * time.Second
)

var (
	slackAlice   = adaptertest.User{ID: "U0ALICE01", Name: "Alice Example"}
	slackBob     = adaptertest.User{ID: "U0BOB0002", Name: "Bob Example"}
	slackMallory = adaptertest.User{ID: "U0MALLORY", Name: "Mallory Example"}
)

type slackDriver struct {
	fake     *slackfake.Fake
	settings Settings
	clock    core.Clock
	m        *Main
}

func (d *slackDriver) Surface() core.Surface      { return core.SurfaceSlack }
func (d *slackDriver) Allowed() adaptertest.User  { return slackAlice }
func (d *slackDriver) Allowed2() adaptertest.User { return slackBob }
func (d *slackDriver) Stranger() adaptertest.User { return slackMallory }

func (d *slackDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.fake = slackfake.New()
	t.Cleanup(d.fake.Close)
	for _, u := range []adaptertest.User{slackAlice, slackBob, slackMallory} {
		d.fake.AddUser(slackfake.User{ID: u.ID, Name: u.Name})
	}
	d.fake.SetGroup(slackGroup, slackBob.ID)
	env := map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-test-bot-token",
		"SLACK_SIGNING_SECRET": slackSecret,
		"SLACK_API_URL":        d.fake.APIURL(),
	}
	d.settings = Settings{
		DataDir: t.TempDir(),
		Slack:   fromEnv(t, env).Slack,
		File: File{
			Routes: map[string]RouteFile{"ops": {
				Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: slackRoom}},
				Deciders: map[string][]string{
					"slack": {slackAlice.ID, "role:" + slackGroup},
					"api":   {"*"},
				},
			}},
			Policies: Policies{DowntimeThreshold: Duration(time.Hour)},
		},
	}
	addTeam(&d.settings.File, core.SurfaceSlack, slackRoom, d.Allowed(), d.Allowed2())
	d.clock = clock
	d.m = startClock(t, d.settings, clock)
	return d.program()
}

func (d *slackDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	if err := d.m.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	d.m = startClock(t, d.settings, d.clock)
	return d.program()
}

func (d *slackDriver) program() adaptertest.Program {
	return adaptertest.Program{URL: d.m.URL, AgentToken: agentA, OperatorToken: opTok}
}

func (d *slackDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, slackRoom, id, cond)
}

// DM is the card in u's direct messages: the fake opens a person's DM as
// their id with D for U.
func (d *slackDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, "D"+u.ID[1:], id, cond)
}

func (d *slackDriver) cardIn(t *testing.T, room string, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	var card adaptertest.Card
	recorded := false
	ok := d.fake.WaitFor(slackWait, func() bool {
		for _, m := range d.fake.Messages() {
			if qid, ok := slackCardOf(m); ok && qid == id && m.Channel == room {
				card = toCard(m)
				// A card counts once the program has recorded it too (it
				// is recorded right after the post), so that a restart
				// straight after cannot fall between the two.
				recorded = recorded || d.recorded(t, id, m.Channel, m.TS)
				return recorded && (cond == nil || cond(card))
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no card for %s as wanted; last seen %+v", id, card)
	}
	return card
}

func (d *slackDriver) recorded(t *testing.T, id core.QuestionID, room, ts string) bool {
	q, err := d.m.Service.Get(t.Context(), id)
	if err != nil {
		return false
	}
	for _, m := range q.Messages {
		if m.Surface == core.SurfaceSlack && m.Room == room && m.ID == ts {
			return true
		}
	}
	return false
}

// Click presses b as Slack does (a signed Interactivity request) and
// waits for the private note the adapter sends for every click.
func (d *slackDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	before := len(d.ephemeralsFor(u.ID))
	status, body := d.sendClick(t, u, c, b, slackSecret, time.Time{})
	if status != http.StatusOK {
		t.Fatalf("click answered %d: %s", status, body)
	}
	var notes []slackfake.Ephemeral
	if !d.fake.WaitFor(slackWait, func() bool { notes = d.ephemeralsFor(u.ID); return len(notes) > before }) {
		t.Fatalf("no private note after %s's click", u.Name)
	}
	return notes[before].PlainText()
}

func (d *slackDriver) ephemeralsFor(user string) []slackfake.Ephemeral {
	var out []slackfake.Ephemeral
	for _, e := range d.fake.Ephemerals() {
		if e.User == user {
			out = append(out, e)
		}
	}
	return out
}

func (d *slackDriver) sendClick(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, secret string, at time.Time) (int, string) {
	t.Helper()
	msg, ok := d.fake.Message(c.Room, c.ID)
	if !ok {
		t.Fatalf("no message %s %s", c.Room, c.ID)
	}
	// The button as the person's client shows it: from the message as it
	// stands, or as the card was when they saw it (a stale screen).
	btn := slackfake.Button{ActionID: b.Value, Value: b.Value, Text: b.Label}
	for _, x := range msg.Buttons() {
		if x.Value == b.Value {
			btn = x
		}
	}
	req := slackfake.Click(d.m.URL+"/slack/interactivity", secret, slackfake.ClickPayload(slackfake.User{ID: u.ID, Name: u.Name}, msg, btn))
	req.At = at
	status, body, err := req.Send(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// Reply posts text in the card's thread and sends Slack's event for it.
func (d *slackDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, _ *adaptertest.Button, text string) {
	t.Helper()
	m := d.fake.AddReply(c.Room, c.ID, u.ID, text)
	body, _ := d.fake.ReplyEvent(m)
	status, resp, err := slackfake.Event(d.m.URL+"/slack/events", slackSecret, body).Send(t.Context())
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply event answered %d %q: %v", status, resp, err)
	}
}

func (d *slackDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	switch f {
	case adaptertest.BadSignature:
		status, _ := d.sendClick(t, u, c, b, "not-the-signing-secret", time.Time{})
		return status, true
	case adaptertest.StaleTimestamp:
		status, _ := d.sendClick(t, u, c, b, slackSecret, time.Now().Add(-10*time.Minute))
		return status, true
	}
	return 0, false
}

// Posts are the bot's messages in the room that are not cards: reminders
// (in a card's thread), digests, anything else.
func (d *slackDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var posts []adaptertest.Post
	ok := d.fake.WaitFor(slackWait, func() bool {
		posts = posts[:0]
		for _, m := range d.fake.Messages() {
			if m.Channel != slackRoom || m.BotID == "" {
				continue
			}
			if _, card := slackCardOf(m); card {
				continue
			}
			posts = append(posts, adaptertest.Post{Text: m.PlainText(), Raw: m.Text + string(m.Blocks)})
		}
		return cond(posts)
	})
	if !ok {
		t.Fatalf("the bot's posts never satisfied the scenario: %+v", posts)
	}
	return posts
}

// Edit clicks b the way Slack does (with a trigger id), submits the modal
// the adapter opened with args, and returns the modal's starting text and
// what Slack showed: the modal's error, or the private note.
func (d *slackDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	msg, ok := d.fake.Message(c.Room, c.ID)
	if !ok {
		t.Fatalf("no message %s %s", c.Room, c.ID)
	}
	btn := slackfake.Button{ActionID: b.Value, Value: b.Value, Text: b.Label}
	su := slackfake.User{ID: u.ID, Name: u.Name}
	views := len(d.fake.Views())
	status, body, err := slackfake.Click(d.m.URL+"/slack/interactivity", slackSecret, d.fake.ClickWithTrigger(su, msg, btn)).Send(t.Context())
	if err != nil || status != http.StatusOK {
		t.Fatalf("edit click answered %d: %s %v", status, body, err)
	}
	var v slackfake.View
	if !d.fake.WaitFor(slackWait, func() bool {
		vs := d.fake.Views()
		if len(vs) > views {
			v = vs[views]
		}
		return len(vs) > views
	}) {
		t.Fatalf("no modal opened after %s's edit click", u.Name)
	}
	if v.User != u.ID || len(v.Inputs()) != 1 {
		t.Fatalf("modal for %s with inputs %+v", v.User, v.Inputs())
	}
	in := v.Inputs()[0]
	before := len(d.ephemeralsFor(u.ID))
	status, body, err = slackfake.Click(d.m.URL+"/slack/interactivity", slackSecret,
		slackfake.SubmitPayload(su, v, map[string]string{in.BlockID: args})).Send(t.Context())
	if err != nil || status != http.StatusOK {
		t.Fatalf("modal submit answered %d: %s %v", status, body, err)
	}
	if body != "" {
		var resp slackgo.ViewSubmissionResponse
		if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.ResponseAction != slackgo.RAErrors {
			t.Fatalf("modal submit answered %q", body)
		}
		return in.Initial, resp.Errors[in.BlockID]
	}
	var notes []slackfake.Ephemeral
	if !d.fake.WaitFor(slackWait, func() bool { notes = d.ephemeralsFor(u.ID); return len(notes) > before }) {
		t.Fatalf("no private note after %s's edit", u.Name)
	}
	return in.Initial, notes[before].PlainText()
}

// Deny is a click: Slack's Deny takes no reason on the card.
func (d *slackDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.Click(t, u, c, b)
}
