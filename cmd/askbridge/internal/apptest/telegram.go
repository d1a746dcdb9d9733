package apptest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

const (
	TgToken  = "7000001:AAH-telegram_test-token"
	TgSecret = "webhook-secret_0123456789"
	TgRoom   = int64(-1001234567890)
)

var (
	TgAlice   = tgbotapi.User{ID: 259760855, FirstName: "Alice", LastName: "Ops", UserName: "alice_ops"}
	TgBob     = tgbotapi.User{ID: 311111111, FirstName: "Bob", LastName: "Builder"}
	TgMallory = tgbotapi.User{ID: 66666666, FirstName: "Mallory"}
)

// TelegramDriver is Telegram's side of the shared scenarios.
type TelegramDriver struct {
	Fake     *telegramfake.Server
	Settings app.Settings
	clock    core.Clock
	Main     *app.Main
	// Users are a test's own people, looked up before the package's.
	Users []tgbotapi.User
}

func (d *TelegramDriver) Surface() core.Surface { return core.SurfaceTelegram }

func (d *TelegramDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.Fake = telegramfake.Start(t, TgToken)
	d.clock = clock
	env := map[string]string{
		"TELEGRAM_BOT_TOKEN":      TgToken,
		"TELEGRAM_WEBHOOK_SECRET": TgSecret,
		"TELEGRAM_WEBHOOK_URL":    "https://askbridge.example/telegram/webhook",
		"TELEGRAM_API_URL":        d.Fake.Endpoint(),
	}
	d.Settings = app.Settings{
		DataDir:  t.TempDir(),
		Telegram: FromEnv(t, env).Telegram,
		File: app.File{
			Routes: map[string]app.RouteFile{"ops": {
				Rooms: []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(TgRoom, 10)}},
				Deciders: map[string][]string{
					"telegram": {TgID(TgAlice), TgID(TgBob)},
					"api":      {"ops"},
				},
			}},
			Policies: app.Policies{DowntimeThreshold: app.Duration(time.Hour)},
		},
	}
	AddTeam(&d.Settings.File, core.SurfaceTelegram, strconv.FormatInt(TgRoom, 10), d.Allowed(), d.Allowed2())
	return d.boot(t)
}

// boot starts the program and points the fake's webhook deliveries at it.
func (d *TelegramDriver) boot(t *testing.T) adaptertest.Program {
	t.Helper()
	d.Main = StartClock(t, d.Settings, d.clock)
	d.Fake.SetWebhookTarget(d.Main.URL + telegram.WebhookPath)
	if !d.Fake.Wait(10*time.Second, func() bool { _, s, _ := d.Fake.Webhook(); return s == TgSecret }) {
		t.Fatal("the program never registered its webhook with the secret token")
	}
	return adaptertest.Program{URL: d.Main.URL, AgentToken: AgentA, OperatorToken: OpTok}
}

func (d *TelegramDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	t.Helper()
	if err := d.Main.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if whileDown != nil {
		whileDown()
	}
	return d.boot(t)
}

// parseTgRoom reads a recorded card's room: a chat id, or a person's DM
// room, whose private chat has their id.
func parseTgRoom(room string) (int64, error) {
	if user, ok := core.DMUser(room); ok {
		room = user
	}
	return strconv.ParseInt(room, 10, 64)
}

func TgID(u tgbotapi.User) string { return strconv.FormatInt(u.ID, 10) }

func TgAsUser(u tgbotapi.User) adaptertest.User {
	return adaptertest.User{ID: TgID(u), Name: strings.TrimSpace(u.FirstName + " " + u.LastName)}
}

func (d *TelegramDriver) Allowed() adaptertest.User  { return TgAsUser(TgAlice) }
func (d *TelegramDriver) Allowed2() adaptertest.User { return TgAsUser(TgBob) }
func (d *TelegramDriver) Stranger() adaptertest.User { return TgAsUser(TgMallory) }

// user maps a scenario user back to the Telegram user the fake sends:
// one of the driver's own users, or of the package's.
func (d *TelegramDriver) user(t *testing.T, u adaptertest.User) tgbotapi.User {
	t.Helper()
	for _, x := range append(slices.Clip(d.Users), TgAlice, TgBob, TgMallory) {
		if TgID(x) == u.ID {
			return x
		}
	}
	t.Fatalf("unknown user %+v", u)
	return tgbotapi.User{}
}

func tgCard(m telegramfake.Message) adaptertest.Card {
	c := adaptertest.Card{Room: strconv.FormatInt(m.ChatID, 10), ID: strconv.Itoa(m.ID), Text: m.Text}
	for _, b := range m.Buttons() {
		c.Buttons = append(c.Buttons, adaptertest.Button{Label: b.Text, Value: b.Data})
	}
	return c
}

// isCardOf reports whether m is a card recorded on the question. A card
// counts once recorded, as a person sees it only after it is posted: a
// click racing the record would find no card to edit (see the notes).
func (d *TelegramDriver) isCardOf(m telegramfake.Message, recorded []string) bool {
	return m.Keyboarded && slices.Contains(recorded, strconv.Itoa(m.ID))
}

func (d *TelegramDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.CardIn(t, TgRoom, id, cond)
}

// DM is the card in u's private chat with the bot, whose id is u's.
func (d *TelegramDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	chat, _ := strconv.ParseInt(u.ID, 10, 64)
	return d.CardIn(t, chat, id, cond)
}

func (d *TelegramDriver) CardIn(t *testing.T, chat int64, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	var last adaptertest.Card
	// A group takes 20 sends a minute: a card queued behind a few edits of
	// earlier cards waits its turn for longer than another platform's would.
	ok := d.Fake.Wait(45*time.Second, func() bool {
		var recorded []string
		if q, err := d.Main.Service.Get(t.Context(), id); err == nil {
			for _, m := range q.Messages {
				if room, _ := parseTgRoom(m.Room); m.Surface == core.SurfaceTelegram && room == chat {
					recorded = append(recorded, m.ID)
				}
			}
		}
		for _, m := range d.Fake.Messages(chat) {
			if d.isCardOf(m, recorded) {
				last = tgCard(m)
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

func (d *TelegramDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	id, _ := strconv.Atoi(c.ID)
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	note, err := d.Fake.Click(d.user(t, u), chat, id, b.Value, 15*time.Second)
	if err != nil {
		t.Fatalf("click: %v", err)
	}
	return note
}

// Reply taps the free-text button when there is one (which sends the
// replier a ForceReply prompt) and replies to that prompt; without a
// button it replies to the card itself.
func (d *TelegramDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, b *adaptertest.Button, text string) {
	t.Helper()
	id, _ := strconv.Atoi(c.ID)
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	target := id
	if b != nil {
		before := len(d.Fake.Messages(chat))
		if note := d.Click(t, u, c, *b); !strings.Contains(note, "Reply to the prompt") {
			t.Fatalf("tapping %q said %q", b.Label, note)
		}
		ok := d.Fake.Wait(10*time.Second, func() bool {
			for _, m := range d.Fake.Messages(chat)[before:] {
				if m.ForceReply != nil && strings.HasSuffix(m.Text, "ref: "+b.Value) {
					target = m.ID
					return true
				}
			}
			return false
		})
		if !ok {
			t.Fatal("no ForceReply prompt after tapping the free-text button")
		}
	}
	status, err := d.Fake.Reply(d.user(t, u), chat, target, text)
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
}

// Forge sends the click with a wrong secret token. Telegram updates carry
// no timestamp, so a stale one does not apply.
func (d *TelegramDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	if f != adaptertest.BadSignature {
		return 0, false
	}
	id, _ := strconv.Atoi(c.ID)
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	upd, _, err := d.Fake.CallbackUpdate(d.user(t, u), chat, id, b.Value)
	if err != nil {
		t.Fatal(err)
	}
	status, err := d.Fake.DeliverWithSecret(upd, "forged-"+TgSecret)
	if err != nil {
		t.Fatal(err)
	}
	return status, true
}

// Posts are the bot's messages that are not cards: reminders, digests,
// prompts and notes.
func (d *TelegramDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var posts []adaptertest.Post
	ok := d.Fake.Wait(20*time.Second, func() bool {
		posts = posts[:0]
		for _, m := range d.Fake.Messages(TgRoom) {
			if !m.Keyboarded {
				posts = append(posts, adaptertest.Post{Text: m.Text, Raw: m.HTML})
			}
		}
		return cond(posts)
	})
	if !ok {
		t.Fatalf("posts never satisfied the condition: %+v", posts)
	}
	return posts
}

// Edit taps b, replies to the prompt it sends with args, and returns the
// prompt's text and any note the bot sent about the reply: a reply the
// bot refused gets one, in reply to it (sent once the chat's budget
// allows, after the webhook has answered), and one it took edits the
// card instead, so the driver waits for either.
func (d *TelegramDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	before := len(d.Fake.Messages(chat))
	if note := d.Click(t, u, c, b); !strings.Contains(note, "Reply to the prompt") {
		t.Fatalf("tapping %q said %q", b.Label, note)
	}
	var prompt telegramfake.Message
	ok := d.Fake.Wait(10*time.Second, func() bool {
		for _, m := range d.Fake.Messages(chat)[before:] {
			if m.ForceReply != nil && strings.HasSuffix(m.Text, "ref: "+b.Value) {
				prompt = m
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatal("no ForceReply prompt after tapping the edit button")
	}
	cardID, _ := strconv.Atoi(c.ID)
	edits := func() int { m, _ := d.Fake.Message(chat, cardID); return m.Edits }
	edited := edits()
	after := len(d.Fake.Messages(chat))
	status, err := d.Fake.Reply(d.user(t, u), chat, prompt.ID, args)
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
	var told []string
	d.Fake.Wait(10*time.Second, func() bool {
		told = told[:0]
		for _, m := range d.Fake.Messages(chat)[after:] {
			told = append(told, m.Text)
		}
		return len(told) > 0 || edits() > edited
	})
	return prompt.Text, strings.Join(told, "\n")
}

// Deny is a tap: Telegram's Deny takes no reason on the card.
func (d *TelegramDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.Click(t, u, c, b)
}
