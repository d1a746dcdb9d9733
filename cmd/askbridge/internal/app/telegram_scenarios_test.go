package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TestTelegramScenarios runs the shared end-to-end scenarios against the
// real program in webhook mode, with the real tgbotapi client talking to
// telegramfake.
func TestTelegramScenarios(t *testing.T) {
	t.Parallel() // mostly waits on Telegram's send budgets: let other such tests wait alongside
	adaptertest.Run(t, &telegramDriver{})
}

const (
	tgToken  = "7000001:AAH-telegram_test-token"
	tgSecret = "webhook-secret_0123456789"
	tgRoom   = int64(-1001234567890)
)

var (
	tgAlice   = tgbotapi.User{ID: 259760855, FirstName: "Alice", LastName: "Ops", UserName: "alice_ops"}
	tgBob     = tgbotapi.User{ID: 311111111, FirstName: "Bob", LastName: "Builder"}
	tgMallory = tgbotapi.User{ID: 66666666, FirstName: "Mallory"}
)

// telegramDriver is Telegram's side of the shared scenarios.
type telegramDriver struct {
	fake     *telegramfake.Server
	settings Settings
	clock    core.Clock
	main     *Main
	// users are a test's own people, looked up before the package's.
	users []tgbotapi.User
}

func (d *telegramDriver) Surface() core.Surface { return core.SurfaceTelegram }

func (d *telegramDriver) Start(t *testing.T, clock core.Clock) adaptertest.Program {
	d.fake = telegramfake.Start(t, tgToken)
	d.clock = clock
	env := map[string]string{
		"TELEGRAM_BOT_TOKEN":      tgToken,
		"TELEGRAM_WEBHOOK_SECRET": tgSecret,
		"TELEGRAM_WEBHOOK_URL":    "https://askbridge.example/telegram/webhook",
		"TELEGRAM_API_URL":        d.fake.Endpoint(),
	}
	d.settings = Settings{
		DataDir:  t.TempDir(),
		Telegram: fromEnv(t, env).Telegram,
		File: File{
			Routes: map[string]RouteFile{"ops": {
				Rooms: []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(tgRoom, 10)}},
				Deciders: map[string][]string{
					"telegram": {tgID(tgAlice), tgID(tgBob)},
					"api":      {"ops"},
				},
			}},
			Policies: Policies{DowntimeThreshold: Duration(time.Hour)},
		},
	}
	addTeam(&d.settings.File, core.SurfaceTelegram, strconv.FormatInt(tgRoom, 10), d.Allowed(), d.Allowed2())
	return d.boot(t)
}

// boot starts the program and points the fake's webhook deliveries at it.
func (d *telegramDriver) boot(t *testing.T) adaptertest.Program {
	t.Helper()
	d.main = startClock(t, d.settings, d.clock)
	d.fake.SetWebhookTarget(d.main.URL + telegram.WebhookPath)
	if !d.fake.Wait(10*time.Second, func() bool { _, s, _ := d.fake.Webhook(); return s == tgSecret }) {
		t.Fatal("the program never registered its webhook with the secret token")
	}
	return adaptertest.Program{URL: d.main.URL, AgentToken: agentA, OperatorToken: opTok}
}

func (d *telegramDriver) Restart(t *testing.T, whileDown func()) adaptertest.Program {
	t.Helper()
	if err := d.main.Close(); err != nil {
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

func tgID(u tgbotapi.User) string { return strconv.FormatInt(u.ID, 10) }

func tgAsUser(u tgbotapi.User) adaptertest.User {
	return adaptertest.User{ID: tgID(u), Name: strings.TrimSpace(u.FirstName + " " + u.LastName)}
}

func (d *telegramDriver) Allowed() adaptertest.User  { return tgAsUser(tgAlice) }
func (d *telegramDriver) Allowed2() adaptertest.User { return tgAsUser(tgBob) }
func (d *telegramDriver) Stranger() adaptertest.User { return tgAsUser(tgMallory) }

// user maps a scenario user back to the Telegram user the fake sends:
// one of the driver's own users, or of the package's.
func (d *telegramDriver) user(t *testing.T, u adaptertest.User) tgbotapi.User {
	t.Helper()
	for _, x := range append(slices.Clip(d.users), tgAlice, tgBob, tgMallory) {
		if tgID(x) == u.ID {
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
func (d *telegramDriver) isCardOf(m telegramfake.Message, recorded []string) bool {
	return m.Keyboarded && slices.Contains(recorded, strconv.Itoa(m.ID))
}

func (d *telegramDriver) Card(t *testing.T, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	return d.cardIn(t, tgRoom, id, cond)
}

// DM is the card in u's private chat with the bot, whose id is u's.
func (d *telegramDriver) DM(t *testing.T, u adaptertest.User, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	chat, _ := strconv.ParseInt(u.ID, 10, 64)
	return d.cardIn(t, chat, id, cond)
}

func (d *telegramDriver) cardIn(t *testing.T, chat int64, id core.QuestionID, cond func(adaptertest.Card) bool) adaptertest.Card {
	t.Helper()
	var last adaptertest.Card
	// A group takes 20 sends a minute: a card queued behind a few edits of
	// earlier cards waits its turn for longer than another platform's would.
	ok := d.fake.Wait(45*time.Second, func() bool {
		var recorded []string
		if q, err := d.main.Service.Get(t.Context(), id); err == nil {
			for _, m := range q.Messages {
				if room, _ := parseTgRoom(m.Room); m.Surface == core.SurfaceTelegram && room == chat {
					recorded = append(recorded, m.ID)
				}
			}
		}
		for _, m := range d.fake.Messages(chat) {
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

func (d *telegramDriver) Click(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	id, _ := strconv.Atoi(c.ID)
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	note, err := d.fake.Click(d.user(t, u), chat, id, b.Value, 15*time.Second)
	if err != nil {
		t.Fatalf("click: %v", err)
	}
	return note
}

// Reply taps the free-text button when there is one (which sends the
// replier a ForceReply prompt) and replies to that prompt; without a
// button it replies to the card itself.
func (d *telegramDriver) Reply(t *testing.T, u adaptertest.User, c adaptertest.Card, b *adaptertest.Button, text string) {
	t.Helper()
	id, _ := strconv.Atoi(c.ID)
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	target := id
	if b != nil {
		before := len(d.fake.Messages(chat))
		if note := d.Click(t, u, c, *b); !strings.Contains(note, "Reply to the prompt") {
			t.Fatalf("tapping %q said %q", b.Label, note)
		}
		ok := d.fake.Wait(10*time.Second, func() bool {
			for _, m := range d.fake.Messages(chat)[before:] {
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
	status, err := d.fake.Reply(d.user(t, u), chat, target, text)
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
}

// Forge sends the click with a wrong secret token. Telegram updates carry
// no timestamp, so a stale one does not apply.
func (d *telegramDriver) Forge(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, f adaptertest.Forgery) (int, bool) {
	t.Helper()
	if f != adaptertest.BadSignature {
		return 0, false
	}
	id, _ := strconv.Atoi(c.ID)
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	upd, _, err := d.fake.CallbackUpdate(d.user(t, u), chat, id, b.Value)
	if err != nil {
		t.Fatal(err)
	}
	status, err := d.fake.DeliverWithSecret(upd, "forged-"+tgSecret)
	if err != nil {
		t.Fatal(err)
	}
	return status, true
}

// Posts are the bot's messages that are not cards: reminders, digests,
// prompts and notes.
func (d *telegramDriver) Posts(t *testing.T, cond func([]adaptertest.Post) bool) []adaptertest.Post {
	t.Helper()
	var posts []adaptertest.Post
	ok := d.fake.Wait(20*time.Second, func() bool {
		posts = posts[:0]
		for _, m := range d.fake.Messages(tgRoom) {
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

func TestOpenTelegramConfig(t *testing.T) {
	fake := telegramfake.Start(t, tgToken)
	svc := startClock(t, Settings{DataDir: t.TempDir()}, nil).Service
	open := func(env map[string]string) (chatAdapter, error) {
		return openWith(t, openTelegram, env, svc)
	}
	if a, err := open(nil); a != nil || err != nil {
		t.Fatalf("no token: %v, %v; want the adapter off", a, err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TELEGRAM_BOT_TOKEN": "nocolon"}, "TELEGRAM_BOT_TOKEN"},
		{map[string]string{"TELEGRAM_BOT_TOKEN": tgToken, "TELEGRAM_API_URL": "http://x/bot"}, "TELEGRAM_API_URL"},
		{map[string]string{"TELEGRAM_BOT_TOKEN": tgToken, "TELEGRAM_API_URL": fake.Endpoint(), "TELEGRAM_WEBHOOK_SECRET": tgSecret}, "TELEGRAM_WEBHOOK_URL"},
		{map[string]string{"TELEGRAM_BOT_TOKEN": tgToken, "TELEGRAM_API_URL": fake.Endpoint(), "TELEGRAM_WEBHOOK_SECRET": "has spaces",
			"TELEGRAM_WEBHOOK_URL": "https://x/telegram/webhook"}, "TELEGRAM_WEBHOOK_SECRET"},
		// Opening makes no call to Telegram: a token it refuses is
		// found by the adapter's Run, which stops the program.
		{map[string]string{"TELEGRAM_BOT_TOKEN": "999:wrong-secret-value", "TELEGRAM_API_URL": fake.Endpoint()}, "telegram: getMe"},
	} {
		a, err := open(c.env)
		if err == nil && a != nil {
			err = a.Run(t.Context())
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want+":") {
			t.Errorf("%v: %v; want an error naming %s", c.env, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "wrong-secret-value") || strings.Contains(err.Error(), "telegram_test-token")) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

// TestTelegramPollingMode runs the real program without a webhook secret:
// it long-polls the fake, keeping its offset in the embedded store, and a
// click still closes the question and edits the card.
func TestTelegramPollingMode(t *testing.T) {
	fake := telegramfake.Start(t, tgToken)
	env := map[string]string{"TELEGRAM_BOT_TOKEN": tgToken, "TELEGRAM_API_URL": fake.Endpoint()}
	s := Settings{DataDir: t.TempDir(), Telegram: fromEnv(t, env).Telegram, File: File{
		Routes: map[string]RouteFile{"ops": {
			Rooms:    []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(tgRoom, 10)}},
			Deciders: map[string][]string{"telegram": {tgID(tgAlice)}},
		}},
	}}
	d := &telegramDriver{fake: fake, settings: s}
	d.main = startClock(t, s, nil)
	q, err := d.main.Service.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "ops",
		Text: "Deploy?", Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 4 }) // approve, deny, standing approve, decline
	if note := d.Click(t, tgAsUser(tgAlice), c, c.Buttons[0]); note != "Recorded: Approved" {
		t.Fatalf("told %q", note)
	}
	d.Card(t, q.ID, func(c adaptertest.Card) bool {
		return len(c.Buttons) == 0 && strings.Contains(c.Text, "Answered by Alice Ops")
	})
	// The offset past the click is in the store, so a restart does not
	// replay it.
	values := d.main.Service.Values()
	key := "telegram:" + strconv.FormatInt(telegramfake.Bot.ID, 10) + ":offset"
	stored := func() bool { off, err := values.Value(t.Context(), key); return err == nil && off != "" && off != "0" }
	if !fake.Wait(10*time.Second, stored) {
		t.Fatal("no offset stored after the click")
	}
	answers := len(slices.DeleteFunc(fake.Calls(), func(c telegramfake.Call) bool { return c.Method != "answerCallbackQuery" }))
	polls := len(fake.Calls())
	if err := d.main.Close(); err != nil {
		t.Fatal(err)
	}
	d.main = startClock(t, s, nil)
	if !fake.Wait(10*time.Second, func() bool {
		for _, c := range fake.Calls()[polls:] {
			if c.Method == "getUpdates" && c.Form.Get("offset") != "" {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the restarted program did not poll from the stored offset")
	}
	if n := len(slices.DeleteFunc(fake.Calls(), func(c telegramfake.Call) bool { return c.Method != "answerCallbackQuery" })); n != answers {
		t.Fatalf("the click was replayed after the restart: %d answers, was %d", n, answers)
	}
}

// TestTelegramLateStart: Telegram unreachable at start does not keep the
// bridge down; the API works at once, and the card follows once Telegram
// answers.
func TestTelegramLateStart(t *testing.T) {
	fake := telegramfake.Start(t, tgToken)
	target, err := url.Parse(strings.SplitN(fake.Endpoint(), "/bot", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(target)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			// Down: the connection drops without an answer.
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer gate.Close()

	env := map[string]string{"TELEGRAM_BOT_TOKEN": tgToken, "TELEGRAM_API_URL": gate.URL + "/bot%s/%s"}
	m := startClock(t, Settings{DataDir: t.TempDir(), Telegram: fromEnv(t, env).Telegram, File: File{
		Routes: map[string]RouteFile{"ops": {
			Rooms:    []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(tgRoom, 10)}},
			Deciders: map[string][]string{"api": {"ops"}},
		}},
	}}, nil)
	q, err := client.New(m.URL, agentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Late?",
		Reversibility: core.Reversible, RunID: "run-late", Route: "ops"})
	if err != nil {
		t.Fatalf("the API is not serving while Telegram is down: %v", err)
	}
	up.Store(true)
	if !fake.Wait(30*time.Second, func() bool {
		for _, msg := range fake.Messages(tgRoom) {
			if strings.Contains(msg.Text, string(q.ID)) {
				return true
			}
		}
		return false
	}) {
		t.Fatal("the card never reached Telegram once it answered")
	}
}

// TestServeStopsOnARefusedToken: a token Telegram refuses stops
// "askbridge serve" with an error, rather than leaving a bridge that
// cannot reach its platform running as if configured.
func TestServeStopsOnARefusedToken(t *testing.T) {
	fake := telegramfake.Start(t, tgToken)
	env := map[string]string{
		"ASKBRIDGE_ADDR": "127.0.0.1:0", "ASKBRIDGE_DATA_DIR": t.TempDir(), "ASKBRIDGE_LOG_FORMAT": "json",
		"TELEGRAM_BOT_TOKEN": "999:wrong-secret-value", "TELEGRAM_API_URL": fake.Endpoint(),
	}
	// The bound only keeps a broken program from hanging the suite.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr syncBuffer
	code := Run(ctx, []string{"serve"}, func(k string) string { return env[k] }, nil, &stdout, &stderr)
	if code != 1 || ctx.Err() != nil {
		t.Fatalf("serve returned %d (context: %v); want 1 on its own:\n%s", code, ctx.Err(), stderr.String())
	}
	if log := stderr.String(); !strings.Contains(log, "refused the bot token") || strings.Contains(log, "wrong-secret-value") {
		t.Fatalf("the log does not say why, or shows the token:\n%s", log)
	}
}

// Edit taps b, replies to the prompt it sends with args, and returns the
// prompt's text and any note the bot sent about the reply (the webhook
// is handled before it answers, so the note is in by then).
func (d *telegramDriver) Edit(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button, args string) (string, string) {
	t.Helper()
	chat, _ := strconv.ParseInt(c.Room, 10, 64)
	before := len(d.fake.Messages(chat))
	if note := d.Click(t, u, c, b); !strings.Contains(note, "Reply to the prompt") {
		t.Fatalf("tapping %q said %q", b.Label, note)
	}
	var prompt telegramfake.Message
	ok := d.fake.Wait(10*time.Second, func() bool {
		for _, m := range d.fake.Messages(chat)[before:] {
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
	after := len(d.fake.Messages(chat))
	status, err := d.fake.Reply(d.user(t, u), chat, prompt.ID, args)
	if err != nil || status != http.StatusOK {
		t.Fatalf("reply: %d %v", status, err)
	}
	var told []string
	for _, m := range d.fake.Messages(chat)[after:] {
		told = append(told, m.Text)
	}
	return prompt.Text, strings.Join(told, "\n")
}

// Deny is a tap: Telegram's Deny takes no reason on the card.
func (d *telegramDriver) Deny(t *testing.T, u adaptertest.User, c adaptertest.Card, b adaptertest.Button) string {
	t.Helper()
	return d.Click(t, u, c, b)
}
