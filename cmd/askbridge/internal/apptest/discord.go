package apptest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
)

const (
	DcRoom = "345626669114982402"
	DcRole = "785609923542777878"
)

// The people: Alice is named on the route, Bob holds a role that is, and
// Mallory is neither.
var DcUsers = map[string]discordfake.User{
	"53908232506183680":  {ID: "53908232506183680", Name: "Alice"},
	"53908232506183681":  {ID: "53908232506183681", Name: "Bob", Roles: []string{DcRole}},
	"290926798626357001": {ID: "290926798626357001", Name: "Mallory", Roles: []string{"1"}},
}

type DiscordDriver struct {
	Backend  Backend
	Fake     *discordfake.Server
	settings app.Settings
	clock    core.Clock
	Main     *app.Main
	// Users are a test's own people, by id, looked up before DcUsers.
	Users map[string]discordfake.User
}

func (d *DiscordDriver) Surface() core.Surface { return core.SurfaceDiscord }

func (d *DiscordDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.Fake = discordfake.New()
	t.Cleanup(d.Fake.Close) // registered first, so it runs after the program stops
	env := map[string]string{
		"DISCORD_BOT_TOKEN":  d.Fake.Token,
		"DISCORD_APP_ID":     d.Fake.AppID,
		"DISCORD_PUBLIC_KEY": d.Fake.PublicKey(),
		"DISCORD_API_URL":    d.Fake.APIURL(),
		"DISCORD_GATEWAY":    "off",
	}
	d.clock = clock
	d.settings = d.Backend.Settings(t) // a fresh store
	d.settings.DataDir = t.TempDir()
	d.settings.Discord = FromEnv(t, env).Discord
	d.settings.File = app.File{
		Routes: map[string]app.RouteFile{"ops": {
			Rooms: []core.Room{{Surface: core.SurfaceDiscord, ID: DcRoom}},
			Deciders: map[string][]string{
				"discord": {"53908232506183680", "role:" + DcRole},
				"api":     {"ops"},
			},
		}},
		Policies: app.Policies{DowntimeThreshold: app.Duration(time.Hour)},
	}
	AddTeam(&d.settings.File, core.SurfaceDiscord, DcRoom, d.Allowed(), d.Allowed2())
	d.Main = StartClock(t, d.settings, clock)
	return d.program()
}

func (d *DiscordDriver) program() adaptertest.Program {
	return adaptertest.Program{URL: d.Main.URL, AgentToken: AgentA, OperatorToken: OpTok}
}

func (d *DiscordDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	if err := d.Main.Close(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	d.Main = StartClock(t, d.settings, d.clock)
	return d.program()
}

func DcAsUser(id string) adaptertest.User { return adaptertest.User{ID: id, Name: DcUsers[id].Name} }

func (d *DiscordDriver) Allowed() adaptertest.User  { return DcAsUser("53908232506183680") }
func (d *DiscordDriver) Allowed2() adaptertest.User { return DcAsUser("53908232506183681") }
func (d *DiscordDriver) Stranger() adaptertest.User { return DcAsUser("290926798626357001") }

func (d *DiscordDriver) user(t *testing.T, u adaptertest.User) discordfake.User {
	t.Helper()
	du, ok := d.Users[u.ID]
	if !ok {
		du, ok = DcUsers[u.ID]
	}
	if !ok {
		t.Fatalf("unknown user %+v", u)
	}
	return du
}

func dcCard(m discordfake.Message) adaptertest.Card {
	c := adaptertest.Card{Room: m.ChannelID, ID: m.ID, Text: dcVisible(m.Content)}
	for _, b := range m.Buttons() {
		c.Buttons = append(c.Buttons, adaptertest.Button{Label: b.Label, Value: b.CustomID})
	}
	return c
}

// Card finds the question's card through the message the program
// recorded for it, then reads it from the fake.
func (d *DiscordDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.CardIn(t, DcRoom, id, cond)
}

// DM is the card in the fake's DM channel with u.
func (d *DiscordDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.CardIn(t, discordfake.DMChannel(u.ID), id, cond)
}

func (d *DiscordDriver) CardIn(t *testing.T, room string, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	var got adaptertest.Card
	ok := d.Fake.WaitFor(15*time.Second, func() bool {
		q, err := d.Main.Service.Get(context.Background(), id)
		if err != nil {
			return false
		}
		for _, ref := range q.Messages {
			if ref.Surface != core.SurfaceDiscord || ref.Room != room {
				continue
			}
			if m, found := d.Fake.Message(ref.ID); found {
				got = dcCard(m)
				return cond == nil || cond(got)
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("the card of %s never matched; last seen %+v", id, got)
	}
	return got
}

func (d *DiscordDriver) Endpoint() string { return d.Main.URL + "/discord/interactions" }

// send posts a signed interaction and wants a 200 with a response.
func (d *DiscordDriver) send(t *testing.T, in discordfake.Interaction) *discordfake.Response {
	t.Helper()
	status, resp, err := d.Fake.Post(d.Endpoint(), in, discordfake.Signed)
	if err != nil || status != http.StatusOK || resp == nil {
		t.Fatalf("interaction answered %d: %v", status, err)
	}
	return resp
}

// Click presses b; the ephemeral reply, if any, is what the clicker alone
// saw.
func (d *DiscordDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	resp := d.send(t, d.Fake.Click(d.user(t, u), c.ID, b.Value))
	if resp.Type == discordfake.ResponseMessage && resp.Flags()&discordfake.FlagEphemeral != 0 {
		return dcVisible(resp.Content())
	}
	return ""
}

// Reply answers in free text through the modal: the button that opens
// it (the form item's, or the card's own free-text button), then the
// submit.
func (d *DiscordDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, b *adaptertest.Button, text string) {
	t.Helper()
	if b == nil {
		for i := range c.Buttons {
			if r, err := core.DecodeRef(c.Buttons[i].Value); err == nil && r.Action == core.RefText {
				b = &c.Buttons[i]
			}
		}
	}
	if b == nil {
		t.Fatalf("the card has no free-text button: %+v", c.Buttons)
	}
	du := d.user(t, u)
	modal := d.send(t, d.Fake.Click(du, c.ID, b.Value))
	if modal.Type != discordfake.ResponseModal || len(modal.InputIDs()) != 1 {
		t.Fatalf("the free-text button answered %d, not a modal with one input: %s", modal.Type, modal.Data)
	}
	resp := d.send(t, d.Fake.Submit(du, c.ID, modal.CustomID(), map[string]string{modal.InputIDs()[0]: text}))
	if resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("the modal submit answered %d: %q", resp.Type, resp.Content())
	}
}

func (d *DiscordDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	how := discordfake.BadSignature
	if f == adaptertest.StaleTimestamp {
		how = discordfake.StaleTimestamp
	}
	status, _, err := d.Fake.Post(d.Endpoint(), d.Fake.Click(d.user(t, u), c.ID, b.Value), how)
	if err != nil {
		t.Fatal(err)
	}
	return status, true
}

// Posts are the bot's messages in the room that were not posted as cards.
func (d *DiscordDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var got []adaptertest.Post
	ok := d.Fake.WaitFor(20*time.Second, func() bool {
		got = nil
		for _, m := range d.Fake.Messages(DcRoom) {
			if !m.Card {
				got = append(got, adaptertest.Post{Text: dcVisible(m.Content), Raw: m.Content})
			}
		}
		return cond(got)
	})
	if !ok {
		t.Fatalf("the posts never matched: %+v", got)
	}
	return got
}

// Edit opens the edit modal with b and submits args in its one input.
func (d *DiscordDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	du := d.user(t, u)
	modal := d.send(t, d.Fake.Click(du, c.ID, b.Value))
	if modal.Type != discordfake.ResponseModal || len(modal.InputIDs()) != 1 {
		t.Fatalf("the edit button answered %d, not a modal with one input: %s", modal.Type, modal.Data)
	}
	input := modal.InputIDs()[0]
	resp := d.send(t, d.Fake.Submit(du, c.ID, modal.CustomID(), map[string]string{input: args}))
	told := ""
	if resp.Type == discordfake.ResponseMessage && resp.Flags()&discordfake.FlagEphemeral != 0 {
		told = dcVisible(resp.Content())
	}
	return modal.InputValues()[input], told
}

// Deny presses Deny, which opens a modal for an optional reason, and
// submits it empty.
func (d *DiscordDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.DenyWith(t, u, c, b, "")
}

// DenyWith presses Deny and submits reason in the modal it opens.
func (d *DiscordDriver) DenyWith(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, reason string) string {
	t.Helper()
	du := d.user(t, u)
	modal := d.send(t, d.Fake.Click(du, c.ID, b.Value))
	if modal.Type != discordfake.ResponseModal || len(modal.InputIDs()) != 1 {
		t.Fatalf("Deny answered %d, not a modal with one input: %s", modal.Type, modal.Data)
	}
	resp := d.send(t, d.Fake.Submit(du, c.ID, modal.CustomID(), map[string]string{modal.InputIDs()[0]: reason}))
	if resp.Type == discordfake.ResponseMessage && resp.Flags()&discordfake.FlagEphemeral != 0 {
		return dcVisible(resp.Content())
	}
	return ""
}
