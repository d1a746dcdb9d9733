package chat

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestTeamsScenarios runs the shared end-to-end scenarios against the
// real program, its Teams adapter talking to teamsfake: the Bot
// Connector, the token endpoint and the signing keys, with every click
// and reply delivered as Teams does, under a signed token.
func TestTeamsScenarios(t *testing.T) {
	t.Parallel() // mostly waits on deliveries, alongside the other platforms' suites
	adaptertest.Run(t, &teamsDriver{})
}

var (
	tmAlice   = teamsfake.User{ID: "29:1alice", AAD: "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa", Name: "Alice Ops"}
	tmBob     = teamsfake.User{ID: "29:1bob", AAD: "bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb", Name: "Bob Builder"}
	tmMallory = teamsfake.User{ID: "29:1mallory", AAD: "cccccccc-3333-4333-8333-cccccccccccc", Name: "Mallory"}
)

// teamsDriver is Teams' side of the shared scenarios.
type teamsDriver struct {
	fake     *teamsfake.Server
	settings app.Settings
	clock    core.Clock
	main     *app.Main
}

func (d *teamsDriver) Surface() core.Surface { return core.SurfaceTeams }

func (d *teamsDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.fake = teamsfake.Start(t, apptest.TmAppID, apptest.TmSecret)
	d.clock = clock
	env := map[string]string{
		"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret, "TEAMS_TENANT_ID": teamsfake.Tenant,
		"TEAMS_SERVICE_URL": d.fake.URL(), "TEAMS_TOKEN_URL": d.fake.TokenURL(), "TEAMS_OPENID_URL": d.fake.OpenIDURL(),
	}
	d.settings = app.Settings{
		DataDir: t.TempDir(),
		Teams:   apptest.FromEnv(t, env).Teams,
		File: app.File{
			Routes: map[string]app.RouteFile{"ops": {
				Rooms: []core.Room{{Surface: core.SurfaceTeams, ID: apptest.TmChannel}},
				Deciders: map[string][]string{
					"teams": {tmAlice.AAD, tmBob.AAD},
					"api":   {"ops"},
				},
			}},
			Policies: app.Policies{DowntimeThreshold: app.Duration(time.Hour)},
		},
	}
	apptest.AddTeam(&d.settings.File, core.SurfaceTeams, apptest.TmChannel, d.Allowed(), d.Allowed2())
	return d.boot(t)
}

func (d *teamsDriver) boot(t *testing.T) adaptertest.Program {
	t.Helper()
	d.main = apptest.StartClock(t, d.settings, d.clock)
	d.fake.SetTarget(d.main.URL + teams.MessagesPath)
	return adaptertest.Program{URL: d.main.URL, AgentToken: apptest.AgentA, OperatorToken: apptest.OpTok}
}

func (d *teamsDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	t.Helper()
	if err := d.main.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	return d.boot(t)
}

func tmAsUser(u teamsfake.User) adaptertest.User { return adaptertest.User{ID: u.AAD, Name: u.Name} }

func (d *teamsDriver) Allowed() adaptertest.User  { return tmAsUser(tmAlice) }
func (d *teamsDriver) Allowed2() adaptertest.User { return tmAsUser(tmBob) }
func (d *teamsDriver) Stranger() adaptertest.User { return tmAsUser(tmMallory) }

func (d *teamsDriver) user(t *testing.T, u adaptertest.User) teamsfake.User {
	t.Helper()
	for _, x := range []teamsfake.User{tmAlice, tmBob, tmMallory} {
		if x.AAD == u.ID {
			return x
		}
	}
	t.Fatalf("unknown user %+v", u)
	return teamsfake.User{}
}

// tmCardJSON is as much of an Adaptive Card as the driver reads.
type tmCardJSON struct {
	Body    []map[string]any `json:"body"`
	MSTeams map[string]any   `json:"msteams"`
}

// tmTexts flattens every visible text of a card.
func tmTexts(raw json.RawMessage) string {
	var c tmCardJSON
	_ = json.Unmarshal(raw, &c)
	var out []string
	for _, e := range c.Body {
		if s, ok := e["text"].(string); ok {
			out = append(out, s)
		}
		if ins, ok := e["inlines"].([]any); ok {
			for _, in := range ins {
				if s, ok := in.(map[string]any)["text"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// tmActions are a card's actions in order, as their data, with the
// input each one reads (nil when none).
func tmActions(raw json.RawMessage) (titles []string, data []map[string]any, inputs map[string]map[string]any) {
	var c tmCardJSON
	_ = json.Unmarshal(raw, &c)
	inputs = map[string]map[string]any{}
	for _, e := range c.Body {
		switch e["type"] {
		case "Input.Text":
			inputs[e["id"].(string)] = e
		case "ActionSet":
			for _, x := range e["actions"].([]any) {
				a := x.(map[string]any)
				titles = append(titles, a["title"].(string))
				data = append(data, a["data"].(map[string]any))
			}
		}
	}
	return titles, data, inputs
}

func tmCard(room string, m teamsfake.Message) adaptertest.Card {
	c := adaptertest.Card{Room: room, ID: m.ID, Text: tmTexts(m.Card)}
	titles, data, _ := tmActions(m.Card)
	for i, title := range titles {
		c.Buttons = append(c.Buttons, adaptertest.Button{Label: title, Value: data[i][teams.DataRef].(string)})
	}
	return c
}

func (d *teamsDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, apptest.TmChannel, id, cond)
}

// DM is the card in the bot's personal chat with u.
func (d *teamsDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, core.DMRoom(u.ID), id, cond)
}

// CardIn waits for the card of question id recorded in room (a channel,
// or a person's DM room) to satisfy cond. A card counts once recorded,
// as a person sees it only after it is posted.
func (d *teamsDriver) cardIn(t *testing.T, room string, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	conv := func(m teamsfake.Message) bool { return m.Channel == room && m.ID == m.Root }
	if user, ok := core.DMUser(room); ok {
		conv = func(m teamsfake.Message) bool { return m.Conversation == teamsfake.PersonalChat(user) }
	}
	var last adaptertest.Card
	ok := d.fake.Wait(15*time.Second, func() bool {
		var recorded []string
		if q, err := d.main.Service.Get(t.Context(), id); err == nil {
			for _, m := range q.Messages {
				if m.Surface == core.SurfaceTeams && m.Room == room {
					recorded = append(recorded, m.ID)
				}
			}
		}
		for _, m := range d.fake.Messages() {
			if conv(m) && slices.Contains(recorded, m.ID) {
				last = tmCard(room, m)
				return cond == nil || cond(last)
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("card of %s never satisfied the condition; last seen %+v", id, last)
	}
	return last
}

// message is the fake's copy of card c.
func (d *teamsDriver) message(t *testing.T, c adaptertest.Card) teamsfake.Message {
	t.Helper()
	for _, m := range d.fake.Messages() {
		if m.ID == c.ID {
			return m
		}
	}
	t.Fatalf("no message %s", c.ID)
	return teamsfake.Message{}
}

// data is what a click on b sends: its data, with text in its input.
// Start is the input's initial value.
func (d *teamsDriver) data(t *testing.T, m teamsfake.Message, b adaptertest.Button, text string) (data map[string]any, start string) {
	t.Helper()
	_, all, inputs := tmActions(m.Card)
	for _, x := range all {
		if x[teams.DataRef] != b.Value {
			continue
		}
		out := map[string]any{}
		for k, v := range x {
			out[k] = v
		}
		if in, ok := x[teams.DataInput].(string); ok {
			out[in] = text
			start, _ = inputs[in]["value"].(string)
		}
		return out, start
	}
	// A button from a card as it was: its ref alone.
	return map[string]any{teams.DataRef: b.Value}, ""
}

func (d *teamsDriver) execute(t *testing.T, u adaptertest.User, m teamsfake.Message, data map[string]any) string {
	t.Helper()
	status, body, err := d.fake.Deliver(d.fake.ExecuteActivity(d.user(t, u), m, teams.Verb, data), "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("invoke: %d %v %s", status, err, body)
	}
	note, err := teamsfake.InvokeNote(body)
	if err != nil {
		t.Fatal(err)
	}
	return note
}

func (d *teamsDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	m := d.message(t, c)
	data, _ := d.data(t, m, b, "")
	return d.execute(t, u, m, data)
}

// Reply writes text in the button's input and clicks it; without a
// button it replies in the card's thread.
func (d *teamsDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, b *adaptertest.Button, text string) {
	t.Helper()
	m := d.message(t, c)
	if b != nil {
		data, _ := d.data(t, m, *b, text)
		d.execute(t, u, m, data)
		return
	}
	status, body, err := d.fake.Deliver(d.fake.ReplyActivity(d.user(t, u), m.Conversation, text), "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v %s", status, err, body)
	}
}

// Edit fills the arguments input (prefilled with the asked ones) and
// clicks "Edit and approve".
func (d *teamsDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	m := d.message(t, c)
	data, start := d.data(t, m, b, args)
	return start, d.execute(t, u, m, data)
}

// Deny clicks Deny with its reason input left empty.
func (d *teamsDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.Click(t, u, c, b)
}

// Forge sends the click under a token signed by another key, or one
// that expired.
func (d *teamsDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	m := d.message(t, c)
	data, _ := d.data(t, m, b, "")
	var tok string
	switch f {
	case adaptertest.BadSignature:
		key, err := teamsfake.OtherKey()
		if err != nil {
			t.Fatal(err)
		}
		tok = d.fake.Sign(teamsfake.Token{Key: key})
	case adaptertest.StaleTimestamp:
		tok = d.fake.Sign(teamsfake.Token{NotBefore: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)})
	}
	status, _, err := d.fake.Deliver(d.fake.ExecuteActivity(d.user(t, u), m, teams.Verb, data), tok)
	if err != nil {
		t.Fatal(err)
	}
	return status, true
}

// Posts are the bot's messages in the channel that are not question
// cards: reminders and digests (small cards whose summary says what they
// are) and text notes.
func (d *teamsDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var posts []adaptertest.Post
	ok := d.fake.Wait(20*time.Second, func() bool {
		posts = posts[:0]
		for _, m := range d.fake.Messages() {
			if m.Channel != apptest.TmChannel {
				continue
			}
			switch {
			case m.Card == nil:
				posts = append(posts, adaptertest.Post{Text: m.Text, Raw: m.Text})
			case m.Summary == card.ReminderHeading || m.Summary == card.DigestHeading:
				posts = append(posts, adaptertest.Post{Text: tmTexts(m.Card), Raw: string(m.Card)})
			}
		}
		return cond(posts)
	})
	if !ok {
		t.Fatalf("posts never satisfied the condition: %+v", posts)
	}
	return posts
}

// TestTeamsApprovalClosesEveryCopy is the Teams case: one program
// with Teams and Slack on; a question posted in a Teams channel and a
// Slack channel; one person approves on Teams; the agent wakes, both
// cards show the outcome, and a late click on Slack is told who closed
// it.
func TestTeamsApprovalClosesEveryCopy(t *testing.T) {
	sd := &apptest.SlackDriver{Fake: slackfake.New()}
	t.Cleanup(sd.Fake.Close)
	sd.Fake.AddUser(slackfake.User{ID: apptest.SlackAlice.ID, Name: apptest.SlackAlice.Name})
	td := &teamsDriver{fake: teamsfake.Start(t, apptest.TmAppID, apptest.TmSecret)}
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": apptest.SlackSecret, "SLACK_API_URL": sd.Fake.APIURL(),
		"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret, "TEAMS_TENANT_ID": teamsfake.Tenant,
		"TEAMS_SERVICE_URL": td.fake.URL(), "TEAMS_TOKEN_URL": td.fake.TokenURL(), "TEAMS_OPENID_URL": td.fake.OpenIDURL(),
	}
	loaded := apptest.FromEnv(t, env)
	s := app.Settings{DataDir: t.TempDir(), Slack: loaded.Slack, Teams: loaded.Teams, File: app.File{
		People: map[string]app.PersonFile{
			"alice": {Name: adaptertest.TeamAlice, Slack: apptest.SlackAlice.ID},
			"erin":  {Name: "Erin Configured", Teams: tmBob.AAD},
		},
		Routes: map[string]app.RouteFile{"pair": {
			Rooms:  []core.Room{{Surface: core.SurfaceTeams, ID: apptest.TmChannel}, {Surface: core.SurfaceSlack, ID: apptest.SlackRoom}},
			People: []string{"person:alice", "person:erin"},
		}},
	}}
	m := apptest.Start(t, s)
	sd.Main, td.main = m, m
	td.fake.SetTarget(m.URL + teams.MessagesPath)
	agent := client.New(m.URL, apptest.AgentA)
	q, err := agent.Ask(t.Context(), client.AskRequest{Kind: core.KindApproval, Question: "Rotate the root keys?", Route: "pair",
		Reversibility: core.HardToReverse, RunID: "run-1", ToolCallID: "toolu_keys", Tool: "kms.rotate", Arguments: []byte(`{"key":"root"}`)})
	if err != nil {
		t.Fatal(err)
	}
	approve := func(c adaptertest.Card) adaptertest.Button {
		t.Helper()
		for _, b := range c.Buttons {
			if r, err := core.DecodeRef(b.Value); err == nil && r.Action == core.RefApprove {
				return b
			}
		}
		t.Fatalf("no approve button on %+v", c)
		return adaptertest.Button{}
	}
	slackCard := sd.Card(t, q.ID, nil)
	teamsCard := td.Card(t, q.ID, nil)
	if note := td.Click(t, tmAsUser(tmBob), teamsCard, approve(teamsCard)); note != "Recorded: Approved" {
		t.Fatalf("the approver was told %q", note)
	}
	res, err := agent.Wait(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != core.StateAnswered || !*res.Resume.Structured.Approved {
		t.Fatalf("the agent woke with %+v", res.Resume)
	}
	closed := func(c adaptertest.Card) bool {
		return len(c.Buttons) == 0 && strings.Contains(c.Text, "Erin Configured")
	}
	td.Card(t, q.ID, closed)
	sd.Card(t, q.ID, closed)
	if note := sd.Click(t, apptest.SlackAlice, slackCard, approve(slackCard)); !strings.Contains(note, "Erin Configured") {
		t.Fatalf("a late click on Slack was told %q", note)
	}
}
