package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
)

// TestOpenDiscordSettings: off without a token, and every bad variable is
// named in the error.
func TestOpenDiscordSettings(t *testing.T) {
	const key = "e2c6ad5a9e0b8d2a6f0c1a7b3e4d5f60718293a4b5c6d7e8f90112233445566a"
	open := func(env map[string]string) (app.ChatAdapter, error) {
		return openWith(t, app.OpenDiscord, env, nil)
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
