package app_test

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/core"
)

// TestOpenSlackSettings: the adapter is off without a bot token, and each
// bad setting is named in the error.
func TestOpenSlackSettings(t *testing.T) {
	svc, err := core.New(nil, core.Config{ActorKey: []byte("k")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func(env map[string]string) (app.ChatAdapter, error) {
		return openWith(t, app.OpenSlack, env, svc)
	}
	if a, err := open(nil); a != nil || err != nil {
		t.Fatalf("without SLACK_BOT_TOKEN: %v %v", a, err)
	}
	for want, env := range map[string]map[string]string{
		"SLACK_APP_TOKEN or SLACK_SIGNING_SECRET": {"SLACK_BOT_TOKEN": "xoxb-1"},
		"SLACK_APP_TOKEN: an app-level token":     {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xoxb-wrong"},
		"SLACK_API_URL":                           {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": "ftp://x"},
	} {
		if _, err := open(env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: error %v, want one naming %s", env, err, want)
		}
	}
	for _, env := range []map[string]string{
		{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": "http://127.0.0.1:1/api"},
		{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"},
	} {
		if a, err := open(env); err != nil || a == nil || a.Surface() != core.SurfaceSlack {
			t.Errorf("%v: %v %v", env, a, err)
		}
	}
}
