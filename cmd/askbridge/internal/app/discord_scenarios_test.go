package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
)

// The Discord side of the shared scenarios: the real program with the
// Discord adapter on (HTTP interactions, gateway off) against a local fake
// of Discord driven by the real discordgo SDK.
// It runs on both stores.
func TestDiscordScenarios(t *testing.T) {
	t.Parallel() // mostly waits on Discord's send budgets: each backend waits alongside the other
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			adaptertest.Run(t, &discordDriver{backend: b})
		})
	}
}

const (
	dcRoom = "345626669114982402"
	dcRole = "785609923542777878"
)

// The people: Alice is named on the route, Bob holds a role that is, and
// Mallory is neither.
var dcUsers = map[string]discordfake.User{
	"53908232506183680":  {ID: "53908232506183680", Name: "Alice"},
	"53908232506183681":  {ID: "53908232506183681", Name: "Bob", Roles: []string{dcRole}},
	"290926798626357001": {ID: "290926798626357001", Name: "Mallory", Roles: []string{"1"}},
}

type discordDriver struct {
	backend  backend
	fake     *discordfake.Server
	settings Settings
	clock    core.Clock
	m        *Main
	// users are a test's own people, by id, looked up before dcUsers.
	users map[string]discordfake.User
}

func (d *discordDriver) Surface() core.Surface { return core.SurfaceDiscord }

func (d *discordDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.fake = discordfake.New()
	t.Cleanup(d.fake.Close) // registered first, so it runs after the program stops
	env := map[string]string{
		"DISCORD_BOT_TOKEN":  d.fake.Token,
		"DISCORD_APP_ID":     d.fake.AppID,
		"DISCORD_PUBLIC_KEY": d.fake.PublicKey(),
		"DISCORD_API_URL":    d.fake.APIURL(),
		"DISCORD_GATEWAY":    "off",
	}
	d.clock = clock
	d.settings = d.backend.settings(t) // a fresh store
	d.settings.DataDir = t.TempDir()
	d.settings.Discord = fromEnv(t, env).Discord
	d.settings.File = File{
		Routes: map[string]RouteFile{"ops": {
			Rooms: []core.Room{{Surface: core.SurfaceDiscord, ID: dcRoom}},
			Deciders: map[string][]string{
				"discord": {"53908232506183680", "role:" + dcRole},
				"api":     {"ops"},
			},
		}},
		Policies: Policies{DowntimeThreshold: Duration(time.Hour)},
	}
	addTeam(&d.settings.File, core.SurfaceDiscord, dcRoom, d.Allowed(), d.Allowed2())
	d.m = startClock(t, d.settings, clock)
	return d.program()
}

func (d *discordDriver) program() adaptertest.Program {
	return adaptertest.Program{URL: d.m.URL, AgentToken: agentA, OperatorToken: opTok}
}

func (d *discordDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	if err := d.m.Close(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	d.m = startClock(t, d.settings, d.clock)
	return d.program()
}

func dcAsUser(id string) adaptertest.User { return adaptertest.User{ID: id, Name: dcUsers[id].Name} }

func (d *discordDriver) Allowed() adaptertest.User  { return dcAsUser("53908232506183680") }
func (d *discordDriver) Allowed2() adaptertest.User { return dcAsUser("53908232506183681") }
func (d *discordDriver) Stranger() adaptertest.User { return dcAsUser("290926798626357001") }

func (d *discordDriver) user(t *testing.T, u adaptertest.User) discordfake.User {
	t.Helper()
	du, ok := d.users[u.ID]
	if !ok {
		du, ok = dcUsers[u.ID]
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
func (d *discordDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, dcRoom, id, cond)
}

// DM is the card in the fake's DM channel with u.
func (d *discordDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, discordfake.DMChannel(u.ID), id, cond)
}

func (d *discordDriver) cardIn(t *testing.T, room string, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	var got adaptertest.Card
	ok := d.fake.WaitFor(15*time.Second, func() bool {
		q, err := d.m.Service.Get(context.Background(), id)
		if err != nil {
			return false
		}
		for _, ref := range q.Messages {
			if ref.Surface != core.SurfaceDiscord || ref.Room != room {
				continue
			}
			if m, found := d.fake.Message(ref.ID); found {
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

func (d *discordDriver) endpoint() string { return d.m.URL + "/discord/interactions" }

// send posts a signed interaction and wants a 200 with a response.
func (d *discordDriver) send(t *testing.T, in discordfake.Interaction) *discordfake.Response {
	t.Helper()
	status, resp, err := d.fake.Post(d.endpoint(), in, discordfake.Signed)
	if err != nil || status != http.StatusOK || resp == nil {
		t.Fatalf("interaction answered %d: %v", status, err)
	}
	return resp
}

// Click presses b; the ephemeral reply, if any, is what the clicker alone
// saw.
func (d *discordDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	resp := d.send(t, d.fake.Click(d.user(t, u), c.ID, b.Value))
	if resp.Type == discordfake.ResponseMessage && resp.Flags()&discordfake.FlagEphemeral != 0 {
		return dcVisible(resp.Content())
	}
	return ""
}

// Reply answers in free text through the modal: the button that opens
// it (the form item's, or the card's own free-text button), then the
// submit.
func (d *discordDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, b *adaptertest.Button, text string) {
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
	modal := d.send(t, d.fake.Click(du, c.ID, b.Value))
	if modal.Type != discordfake.ResponseModal || len(modal.InputIDs()) != 1 {
		t.Fatalf("the free-text button answered %d, not a modal with one input: %s", modal.Type, modal.Data)
	}
	resp := d.send(t, d.fake.Submit(du, c.ID, modal.CustomID(), map[string]string{modal.InputIDs()[0]: text}))
	if resp.Type != discordfake.ResponseUpdateMessage {
		t.Fatalf("the modal submit answered %d: %q", resp.Type, resp.Content())
	}
}

func (d *discordDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	how := discordfake.BadSignature
	if f == adaptertest.StaleTimestamp {
		how = discordfake.StaleTimestamp
	}
	status, _, err := d.fake.Post(d.endpoint(), d.fake.Click(d.user(t, u), c.ID, b.Value), how)
	if err != nil {
		t.Fatal(err)
	}
	return status, true
}

// Posts are the bot's messages in the room that were not posted as cards.
func (d *discordDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var got []adaptertest.Post
	ok := d.fake.WaitFor(20*time.Second, func() bool {
		got = nil
		for _, m := range d.fake.Messages(dcRoom) {
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

// TestOpenDiscordSettings: off without a token, and every bad variable is
// named in the error.
func TestOpenDiscordSettings(t *testing.T) {
	const key = "e2c6ad5a9e0b8d2a6f0c1a7b3e4d5f60718293a4b5c6d7e8f90112233445566a"
	open := func(env map[string]string) (chatAdapter, error) {
		return openWith(t, openDiscord, env, nil)
	}
	if a, err := open(nil); a != nil || err != nil {
		t.Fatalf("no token: %v %v", a, err)
	}
	for want, env := range map[string]map[string]string{
		"DISCORD_PUBLIC_KEY": {"DISCORD_BOT_TOKEN": "t", "DISCORD_PUBLIC_KEY": "zz"},
		"DISCORD_GATEWAY":    {"DISCORD_BOT_TOKEN": "t", "DISCORD_GATEWAY": "off"},
		"DISCORD_API_URL":    {"DISCORD_BOT_TOKEN": "t", "DISCORD_API_URL": "discord.com/api"},
		"DISCORD_APP_ID":     {"DISCORD_BOT_TOKEN": "t", "DISCORD_APP_ID": "my-app"},
	} {
		if _, err := open(env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if _, err := open(map[string]string{"DISCORD_BOT_TOKEN": "t", "DISCORD_GATEWAY": "sometimes"}); err == nil {
		t.Error("a gateway setting that is neither on nor off was accepted")
	}
	a, err := open(map[string]string{"DISCORD_BOT_TOKEN": "Bot t", "DISCORD_PUBLIC_KEY": key, "DISCORD_GATEWAY": "off", "DISCORD_APP_ID": "1"})
	if err != nil || a == nil || a.Surface() != core.SurfaceDiscord {
		t.Fatalf("configured: %v %v", a, err)
	}
	mux := http.NewServeMux()
	a.Mount(mux)
	if _, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, "/discord/interactions", nil)); pattern == "" {
		t.Fatal("the interactions endpoint is not mounted")
	}
}

// Edit opens the edit modal with b and submits args in its one input.
func (d *discordDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	du := d.user(t, u)
	modal := d.send(t, d.fake.Click(du, c.ID, b.Value))
	if modal.Type != discordfake.ResponseModal || len(modal.InputIDs()) != 1 {
		t.Fatalf("the edit button answered %d, not a modal with one input: %s", modal.Type, modal.Data)
	}
	input := modal.InputIDs()[0]
	resp := d.send(t, d.fake.Submit(du, c.ID, modal.CustomID(), map[string]string{input: args}))
	told := ""
	if resp.Type == discordfake.ResponseMessage && resp.Flags()&discordfake.FlagEphemeral != 0 {
		told = dcVisible(resp.Content())
	}
	return modal.InputValues()[input], told
}

// Deny presses Deny, which opens a modal for an optional reason, and
// submits it empty.
func (d *discordDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.DenyWith(t, u, c, b, "")
}

// DenyWith presses Deny and submits reason in the modal it opens.
func (d *discordDriver) DenyWith(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, reason string) string {
	t.Helper()
	du := d.user(t, u)
	modal := d.send(t, d.fake.Click(du, c.ID, b.Value))
	if modal.Type != discordfake.ResponseModal || len(modal.InputIDs()) != 1 {
		t.Fatalf("Deny answered %d, not a modal with one input: %s", modal.Type, modal.Data)
	}
	resp := d.send(t, d.fake.Submit(du, c.ID, modal.CustomID(), map[string]string{modal.InputIDs()[0]: reason}))
	if resp.Type == discordfake.ResponseMessage && resp.Flags()&discordfake.FlagEphemeral != 0 {
		return dcVisible(resp.Content())
	}
	return ""
}
