package apptest

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
)

const (
	SlackRoom   = "C0ASKOPS"
	SlackSecret = "slack-signing-secret-for-tests"
	SlackGroup  = "S0DEPLOY" // Allowed2 decides through this user group
	SlackWait   = 15 * time.Second
)

var (
	SlackAlice   = adaptertest.User{ID: "U0ALICE01", Name: "Alice Example"}
	SlackBob     = adaptertest.User{ID: "U0BOB0002", Name: "Bob Example"}
	SlackMallory = adaptertest.User{ID: "U0MALLORY", Name: "Mallory Example"}
)

type SlackDriver struct {
	Fake     *slackfake.Fake
	settings app.Settings
	clock    core.Clock
	Main     *app.Main
}

func (d *SlackDriver) Surface() core.Surface      { return core.SurfaceSlack }
func (d *SlackDriver) Allowed() adaptertest.User  { return SlackAlice }
func (d *SlackDriver) Allowed2() adaptertest.User { return SlackBob }
func (d *SlackDriver) Stranger() adaptertest.User { return SlackMallory }

func (d *SlackDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.Fake = slackfake.New()
	t.Cleanup(d.Fake.Close)
	for _, u := range []adaptertest.User{SlackAlice, SlackBob, SlackMallory} {
		d.Fake.AddUser(slackfake.User{ID: u.ID, Name: u.Name})
	}
	d.Fake.SetGroup(SlackGroup, SlackBob.ID)
	env := map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-test-bot-token",
		"SLACK_SIGNING_SECRET": SlackSecret,
		"SLACK_API_URL":        d.Fake.APIURL(),
	}
	d.settings = app.Settings{
		DataDir: t.TempDir(),
		Slack:   FromEnv(t, env).Slack,
		File: app.File{
			Routes: map[string]app.RouteFile{"ops": {
				Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: SlackRoom}},
				Deciders: map[string][]string{
					"slack": {SlackAlice.ID, "role:" + SlackGroup},
					"api":   {"*"},
				},
			}},
			Policies: app.Policies{DowntimeThreshold: app.Duration(time.Hour)},
		},
	}
	AddTeam(&d.settings.File, core.SurfaceSlack, SlackRoom, d.Allowed(), d.Allowed2())
	d.clock = clock
	d.Main = StartClock(t, d.settings, clock)
	return d.program()
}

func (d *SlackDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	if err := d.Main.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	d.Main = StartClock(t, d.settings, d.clock)
	return d.program()
}

func (d *SlackDriver) program() adaptertest.Program {
	return adaptertest.Program{URL: d.Main.URL, AgentToken: AgentA, OperatorToken: OpTok}
}

func (d *SlackDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.CardIn(t, SlackRoom, id, cond)
}

// DM is the card in u's direct messages: the fake opens a person's DM as
// their id with D for U.
func (d *SlackDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.CardIn(t, "D"+u.ID[1:], id, cond)
}

func (d *SlackDriver) CardIn(t *testing.T, room string, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	var card adaptertest.Card
	recorded := false
	ok := d.Fake.WaitFor(SlackWait, func() bool {
		for _, m := range d.Fake.Messages() {
			if qid, ok := SlackCardOf(m); ok && qid == id && m.Channel == room {
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

func (d *SlackDriver) recorded(t *testing.T, id core.QuestionID, room, ts string) bool {
	q, err := d.Main.Service.Get(t.Context(), id)
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
func (d *SlackDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	before := len(d.ephemeralsFor(u.ID))
	status, body := d.sendClick(t, u, c, b, SlackSecret, time.Time{})
	if status != http.StatusOK {
		t.Fatalf("click answered %d: %s", status, body)
	}
	var notes []slackfake.Ephemeral
	if !d.Fake.WaitFor(SlackWait, func() bool { notes = d.ephemeralsFor(u.ID); return len(notes) > before }) {
		t.Fatalf("no private note after %s's click", u.Name)
	}
	return notes[before].PlainText()
}

func (d *SlackDriver) ephemeralsFor(user string) []slackfake.Ephemeral {
	var out []slackfake.Ephemeral
	for _, e := range d.Fake.Ephemerals() {
		if e.User == user {
			out = append(out, e)
		}
	}
	return out
}

func (d *SlackDriver) sendClick(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, secret string, at time.Time) (int, string) {
	t.Helper()
	msg, ok := d.Fake.Message(c.Room, c.ID)
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
	req := slackfake.Click(d.Main.URL+"/slack/interactivity", secret, slackfake.ClickPayload(slackfake.User{ID: u.ID, Name: u.Name}, msg, btn))
	req.At = at
	status, body, err := req.Send(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// Reply posts text in the card's thread and sends Slack's event for it.
func (d *SlackDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, _ *adaptertest.Button, text string) {
	t.Helper()
	m := d.Fake.AddReply(c.Room, c.ID, u.ID, text)
	body, _ := d.Fake.ReplyEvent(m)
	status, resp, err := slackfake.Event(d.Main.URL+"/slack/events", SlackSecret, body).Send(t.Context())
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply event answered %d %q: %v", status, resp, err)
	}
}

func (d *SlackDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	switch f {
	case adaptertest.BadSignature:
		status, _ := d.sendClick(t, u, c, b, "not-the-signing-secret", time.Time{})
		return status, true
	case adaptertest.StaleTimestamp:
		status, _ := d.sendClick(t, u, c, b, SlackSecret, time.Now().Add(-10*time.Minute))
		return status, true
	}
	return 0, false
}

// Posts are the bot's messages in the room that are not cards: reminders
// (in a card's thread), digests, anything else.
func (d *SlackDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var posts []adaptertest.Post
	ok := d.Fake.WaitFor(SlackWait, func() bool {
		posts = posts[:0]
		for _, m := range d.Fake.Messages() {
			if m.Channel != SlackRoom || m.BotID == "" {
				continue
			}
			if _, card := SlackCardOf(m); card {
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
func (d *SlackDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	msg, ok := d.Fake.Message(c.Room, c.ID)
	if !ok {
		t.Fatalf("no message %s %s", c.Room, c.ID)
	}
	btn := slackfake.Button{ActionID: b.Value, Value: b.Value, Text: b.Label}
	su := slackfake.User{ID: u.ID, Name: u.Name}
	views := len(d.Fake.Views())
	status, body, err := slackfake.Click(d.Main.URL+"/slack/interactivity", SlackSecret, d.Fake.ClickWithTrigger(su, msg, btn)).Send(t.Context())
	if err != nil || status != http.StatusOK {
		t.Fatalf("edit click answered %d: %s %v", status, body, err)
	}
	var v slackfake.View
	if !d.Fake.WaitFor(SlackWait, func() bool {
		vs := d.Fake.Views()
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
	status, body, err = slackfake.Click(d.Main.URL+"/slack/interactivity", SlackSecret,
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
	if !d.Fake.WaitFor(SlackWait, func() bool { notes = d.ephemeralsFor(u.ID); return len(notes) > before }) {
		t.Fatalf("no private note after %s's edit", u.Name)
	}
	return in.Initial, notes[before].PlainText()
}

// Deny is a click: Slack's Deny takes no reason on the card.
func (d *SlackDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.Click(t, u, c, b)
}
