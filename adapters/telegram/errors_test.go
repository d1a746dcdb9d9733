package telegram

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
)

func TestCourierErrors(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(decisionInput())
	ctx := t.Context()
	if err := e.a.hello(ctx); err != nil { // what Run does first
		t.Fatal(err)
	}
	r := strconv.FormatInt(room, 10)

	e.fake.FailNext("sendMessage", telegramfake.Failure{Code: 429, Description: "Too Many Requests: retry after 7", RetryAfter: 7})
	_, err := e.a.Post(ctx, q, core.MessageRef{Room: r, Kind: core.DeliverPost})
	var ra *core.RetryAfter
	if !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Fatalf("429: %v", err)
	}
	e.fake.FailNext("sendMessage", telegramfake.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	var perm *core.Permanent
	if _, err := e.a.Post(ctx, q, core.MessageRef{Room: r, Kind: core.DeliverPost}); !errors.As(err, &perm) {
		t.Fatalf("403: %v", err)
	}
	e.fake.FailNext("sendMessage", telegramfake.Failure{Code: 400, Description: "Bad Request: chat not found"})
	if _, err := e.a.Post(ctx, q, core.MessageRef{Room: r, Kind: core.DeliverPost}); !errors.As(err, &perm) {
		t.Fatalf("chat not found: %v", err)
	}
	if _, err := e.a.Post(ctx, q, core.MessageRef{Room: "general", Kind: core.DeliverPost}); !errors.As(err, &perm) {
		t.Fatalf("a room that is not a chat id: %v", err)
	}
	e.fake.FailNext("sendMessage", telegramfake.Failure{Code: 502, Description: "Bad Gateway"})
	if _, err := e.a.Post(ctx, q, core.MessageRef{Room: r, Kind: core.DeliverPost}); err == nil || errors.As(err, &perm) || errors.As(err, &ra) {
		t.Fatalf("502 must be retried: %v", err)
	}
	ref, err := e.a.Post(ctx, q, core.MessageRef{Room: r, Kind: core.DeliverPost})
	if err != nil {
		t.Fatal(err)
	}
	// The same content again is "not modified" on Telegram: done.
	if err := e.a.Update(ctx, q, ref); err != nil {
		t.Fatalf("an unchanged edit: %v", err)
	}
	e.fake.FailNext("editMessageText", telegramfake.Failure{Code: 400, Description: "Bad Request: message to edit not found"})
	if err := e.a.Update(ctx, q, ref); !errors.As(err, &perm) {
		t.Fatalf("edit of a deleted message: %v", err)
	}
	// Transport errors never carry the token (tgbotapi puts it in the URL).
	e.a.opts.APIEndpoint = "http://127.0.0.1:1/bot%s/%s"
	e.a.bot.SetAPIEndpoint(e.a.opts.APIEndpoint)
	_, err = e.a.Post(ctx, q, core.MessageRef{Room: r, Kind: core.DeliverPost})
	if err == nil || strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "TEST-token") {
		t.Fatalf("transport error %v", err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	fake := telegramfake.Start(t, token)
	for name, o := range map[string]Options{
		"no token":      {APIEndpoint: fake.Endpoint(), KV: newMemKV()},
		"bad endpoint":  {Token: token, APIEndpoint: "http://x/", KV: newMemKV()},
		"bad secret":    {Token: token, APIEndpoint: fake.Endpoint(), WebhookSecret: "no spaces allowed", WebhookURL: "https://x/y"},
		"no url":        {Token: token, APIEndpoint: fake.Endpoint(), WebhookSecret: "ok"},
		"no kv to poll": {Token: token, APIEndpoint: fake.Endpoint()},
		"wrong token":   {Token: "999:nope", APIEndpoint: fake.Endpoint(), KV: newMemKV()},
	} {
		a, err := New(nil, o)
		if err == nil {
			// New makes no call to Telegram: a token it refuses is
			// found when Run asks who the bot is.
			err = a.Run(t.Context())
		}
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "nope") {
			t.Errorf("%s: the error shows the token: %v", name, err)
		}
	}
}

// TestInlineCallbackFixture: the documented inline-message callback (no
// message, foreign data) is answered, truthfully, and changes nothing.
func TestInlineCallbackFixture(t *testing.T) {
	e := newEnv(t, nil)
	e.run()
	raw, err := os.ReadFile("telegramfake/fixtures/telegram-update-callback-query-inline-docs.json")
	if err != nil {
		t.Fatal(err)
	}
	var u map[string]any
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	if status, err := e.fake.Deliver(u); err != nil || status != http.StatusOK {
		t.Fatalf("status %d, %v", status, err)
	}
	for _, c := range e.fake.Calls() {
		if c.Method == "answerCallbackQuery" && c.Form.Get("callback_query_id") == "4382bfdwdsb323b2d9" {
			if got := c.Form.Get("text"); got != "This question no longer exists." {
				t.Fatalf("answered %q", got)
			}
			return
		}
	}
	t.Fatal("the callback query was not answered")
}

// TestUpgradedGroupNamesItsNewChat: a group Telegram upgraded to a
// supergroup (as it does when a group gets topics, a public link or many
// members) refuses every message with the supergroup's new id in
// parameters.migrate_to_chat_id. The delivery is given up (the route's
// room names the old chat), and its error names the new id, so the
// operator's log says which room to configure. Before, it said only
// "Bad Request: group chat was upgraded to a supergroup chat".
func TestUpgradedGroupNamesItsNewChat(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(decisionInput())
	ctx := t.Context()
	if err := e.a.hello(ctx); err != nil {
		t.Fatal(err)
	}
	const group, super = -4012345678, -1004012345678
	upgraded := telegramfake.Failure{Code: 400, Description: "Bad Request: group chat was upgraded to a supergroup chat", MigrateTo: super}
	e.fake.FailNext("sendMessage", upgraded)
	_, err := e.a.Post(ctx, q, core.MessageRef{Room: strconv.FormatInt(group, 10), Kind: core.DeliverPost})
	var perm *core.Permanent
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), strconv.FormatInt(super, 10)) {
		t.Fatalf("a post to the upgraded group: %v", err)
	}
	e.fake.FailNext("editMessageText", upgraded)
	err = e.a.Update(ctx, q, core.MessageRef{Surface: core.SurfaceTelegram, Room: strconv.FormatInt(group, 10), ID: "4071"})
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), strconv.FormatInt(super, 10)) {
		t.Fatalf("an edit in the upgraded group: %v", err)
	}
}
