package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
)

func TestOpenTelegramConfig(t *testing.T) {
	fake := telegramfake.Start(t, apptest.TgToken)
	svc := apptest.StartClock(t, app.Settings{DataDir: t.TempDir()}, nil).Service
	open := func(env map[string]string) (app.ChatAdapter, error) {
		return openWith(t, app.OpenTelegram, env, svc)
	}
	if a, err := open(nil); a != nil || err != nil {
		t.Fatalf("no token: %v, %v; want the adapter off", a, err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TELEGRAM_BOT_TOKEN": "nocolon"}, "TELEGRAM_BOT_TOKEN"},
		{map[string]string{"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_API_URL": "http://x/bot"}, "TELEGRAM_API_URL"},
		{map[string]string{"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_API_URL": fake.Endpoint(), "TELEGRAM_WEBHOOK_SECRET": apptest.TgSecret}, "TELEGRAM_WEBHOOK_URL"},
		{map[string]string{"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_API_URL": fake.Endpoint(), "TELEGRAM_WEBHOOK_SECRET": "has spaces",
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
