package telegram

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
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestTelegramScenarios runs the shared end-to-end scenarios against the
// real program in webhook mode, with the real tgbotapi client talking to
// telegramfake.
func TestTelegramScenarios(t *testing.T) {
	t.Parallel() // mostly waits on Telegram's send budgets: let other such tests wait alongside
	adaptertest.Run(t, &apptest.TelegramDriver{})
}

// TestTelegramPollingMode runs the real program without a webhook secret:
// it long-polls the fake, keeping its offset in the embedded store, and a
// click still closes the question and edits the card.
func TestTelegramPollingMode(t *testing.T) {
	fake := telegramfake.Start(t, apptest.TgToken)
	env := map[string]string{"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_API_URL": fake.Endpoint()}
	s := app.Settings{DataDir: t.TempDir(), Telegram: apptest.FromEnv(t, env).Telegram, File: app.File{
		Routes: map[string]app.RouteFile{"ops": {
			Rooms:    []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(apptest.TgRoom, 10)}},
			Deciders: map[string][]string{"telegram": {apptest.TgID(apptest.TgAlice)}},
		}},
	}}
	d := &apptest.TelegramDriver{Fake: fake, Settings: s}
	d.Main = apptest.StartClock(t, s, nil)
	q, err := d.Main.Service.Ask(t.Context(), core.AskInput{Kind: core.KindApproval, Agent: "a", RunID: "r", Route: "ops",
		Text: "Deploy?", Reversibility: core.Reversible, Tool: "deploy", Arguments: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 4 }) // approve, deny, standing approve, decline
	if note := d.Click(t, apptest.TgAsUser(apptest.TgAlice), c, c.Buttons[0]); note != "Recorded: Approved" {
		t.Fatalf("told %q", note)
	}
	d.Card(t, q.ID, func(c adaptertest.Card) bool {
		return len(c.Buttons) == 0 && strings.Contains(c.Text, "Answered by Alice Ops")
	})
	// The offset past the click is in the store, so a restart does not
	// replay it.
	values := d.Main.Service.Values()
	key := "telegram:" + strconv.FormatInt(telegramfake.Bot.ID, 10) + ":offset"
	stored := func() bool { off, err := values.Value(t.Context(), key); return err == nil && off != "" && off != "0" }
	if !fake.Wait(10*time.Second, stored) {
		t.Fatal("no offset stored after the click")
	}
	answers := len(slices.DeleteFunc(fake.Calls(), func(c telegramfake.Call) bool { return c.Method != "answerCallbackQuery" }))
	polls := len(fake.Calls())
	if err := d.Main.Close(); err != nil {
		t.Fatal(err)
	}
	d.Main = apptest.StartClock(t, s, nil)
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
// Bridge down; the API works at once, and the card follows once Telegram
// answers.
func TestTelegramLateStart(t *testing.T) {
	fake := telegramfake.Start(t, apptest.TgToken)
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

	env := map[string]string{"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_API_URL": gate.URL + "/bot%s/%s"}
	m := apptest.StartClock(t, app.Settings{DataDir: t.TempDir(), Telegram: apptest.FromEnv(t, env).Telegram, File: app.File{
		Routes: map[string]app.RouteFile{"ops": {
			Rooms:    []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(apptest.TgRoom, 10)}},
			Deciders: map[string][]string{"api": {"ops"}},
		}},
	}}, nil)
	q, err := client.New(m.URL, apptest.AgentA).Ask(t.Context(), client.AskRequest{Kind: core.KindClarification, Question: "Late?",
		Reversibility: core.Reversible, RunID: "run-late", Route: "ops"})
	if err != nil {
		t.Fatalf("the API is not serving while Telegram is down: %v", err)
	}
	up.Store(true)
	if !fake.Wait(30*time.Second, func() bool {
		for _, msg := range fake.Messages(apptest.TgRoom) {
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
	fake := telegramfake.Start(t, apptest.TgToken)
	env := map[string]string{
		"ASKBRIDGE_ADDR": "127.0.0.1:0", "ASKBRIDGE_DATA_DIR": t.TempDir(), "ASKBRIDGE_LOG_FORMAT": "json",
		"TELEGRAM_BOT_TOKEN": "999:wrong-secret-value", "TELEGRAM_API_URL": fake.Endpoint(),
	}
	// The bound only keeps a broken program from hanging the suite.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var stdout, stderr apptest.SyncBuffer
	code := app.Run(ctx, []string{"serve"}, func(k string) string { return env[k] }, nil, &stdout, &stderr)
	if code != 1 || ctx.Err() != nil {
		t.Fatalf("serve returned %d (context: %v); want 1 on its own:\n%s", code, ctx.Err(), stderr.String())
	}
	if log := stderr.String(); !strings.Contains(log, "refused the bot token") || strings.Contains(log, "wrong-secret-value") {
		t.Fatalf("the log does not say why, or shows the token:\n%s", log)
	}
}
