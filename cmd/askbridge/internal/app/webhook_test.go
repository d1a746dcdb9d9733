package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/webhook"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

func TestWebhookConfigNamesTheBadKey(t *testing.T) {
	env := func(k string) string { return map[string]string{"HOOK_SECRET": "hook-secret-0123456789"}[k] }
	const allow = "webhooks: {allow: ['https://hooks.example.test/ab/'], secret_env: HOOK_SECRET}\n"
	for _, tt := range []struct{ name, yaml, want string }{
		{"a prefix that is not a URL", "webhooks: {allow: ['hooks.example.test'], secret_env: HOOK_SECRET}", "webhooks.allow[0]"},
		{"allow without a secret", "webhooks: {allow: ['https://hooks.example.test/ab/']}", "webhooks: secret or secret_env is required"},
		{"a secret both ways", "webhooks: {allow: ['https://hooks.example.test/ab/'], secret: s0123456789abcdef, secret_env: HOOK_SECRET}", "webhooks.secret: give webhooks.secret or webhooks.secret_env, not both"},
		{"an empty secret variable", "webhooks: {allow: ['https://hooks.example.test/ab/'], secret_env: NOPE}", "webhooks.secret_env: environment variable NOPE is empty"},
		{"a short secret", "webhooks: {allow: ['https://hooks.example.test/ab/'], secret: short}", "webhooks.secret: must be at least 16"},
		{"a route callback off the list", allow + "routes: {a: {callback_url: 'https://elsewhere.test/ab/x'}}", "routes.a.callback_url"},
		{"a route callback with callbacks off", "routes: {a: {callback_url: 'https://hooks.example.test/ab/x'}}", "routes.a.callback_url: callbacks are off"},
		{"a route secret without a callback", allow + "routes: {a: {webhook_secret: route-secret-0123456789}}", "routes.a.webhook_secret: set without callback_url"},
		{"a short token secret", allow + "tokens: [{name: x, role: agent, token: abcdefghijklmnopq, webhook_secret: short}]", "tokens[0].webhook_secret: must be at least 16"},
		{"an unknown webhooks key", "webhooks: {allowed: []}", "field allowed not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := app.ParseFile([]byte(tt.yaml), env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := app.ParseFile([]byte("webhooks: {allow: ['https://hooks.example.test/ab/'], secret_env: HOOK_SECRET, give_up_after: 30s}"), env); err == nil ||
		!strings.Contains(err.Error(), "webhooks.give_up_after: must be at least 1m") {
		t.Fatalf("give_up_after 30s: %v", err)
	}
	f, err := app.ParseFile([]byte(`
webhooks:
  allow: ['https://hooks.example.test/ab/']
  secret_env: HOOK_SECRET
  give_up_after: 2h
routes:
  a: {callback_url: 'https://hooks.example.test/ab/a', webhook_secret_env: HOOK_SECRET}
`), env)
	if err != nil {
		t.Fatal(err)
	}
	if f.Webhooks.Secret.Reveal() != "hook-secret-0123456789" || f.Routes["a"].WebhookSecret.Reveal() != "hook-secret-0123456789" ||
		time.Duration(f.Webhooks.GiveUpAfter) != 2*time.Hour {
		t.Fatalf("parsed %+v", f.Webhooks)
	}
}

// TestWebhookEndToEnd runs the real program with callbacks allowed to a
// local receiver: an ask with a callback_url off the list is refused with
// a clear error and stores nothing; one on the list gets, when it is
// answered, a POST of the wait's response signed under the token's own
// secret, which Verify accepts; a route's callback gets its route's
// questions, signed under the route's secret. On both stores.
func TestWebhookEndToEnd(t *testing.T) {
	apptest.ForEachBackend(t, func(t *testing.T, b apptest.Backend) {
		type hit struct {
			path string
			h    http.Header
			body []byte
		}
		hits := make(chan hit, 8)
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			hits <- hit{r.URL.Path, r.Header.Clone(), body}
		}))
		defer recv.Close()

		const tokenSecret, routeSecret, fallback = "agent-a-hook-secret-0123", "hooked-route-secret-0123", "default-hook-secret-0123"
		s := b.Settings(t)
		s.File.Webhooks = app.WebhooksFile{Allow: []string{recv.URL + "/hooks/"}, Secret: fallback}
		s.File.Routes = map[string]app.RouteFile{
			core.DefaultRoute: {Deciders: map[string][]string{"api": {"*"}}},
			"hooked":          {Deciders: map[string][]string{"api": {"*"}}, CallbackURL: recv.URL + "/hooks/route", WebhookSecret: routeSecret},
		}
		s.File.Tokens = []app.TokenFile{{Name: "agent-c", Role: "agent", Token: "agent-c-token-0123456789", WebhookSecret: tokenSecret}}
		m := apptest.Start(t, s)
		agent, ops := client.New(m.URL, "agent-c-token-0123456789"), client.New(m.URL, apptest.OpTok)

		off := clarify("Off the list?")
		off.CallbackURL = "https://elsewhere.test/hooks/x"
		_, err := agent.Ask(t.Context(), off)
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || !strings.Contains(apiErr.Message, "callback_url") {
			t.Fatalf("an ask off the list: %v", err)
		}
		if list, err := ops.List(t.Context(), "", 0); err != nil || len(list.Questions) != 0 {
			t.Fatalf("the refused ask stored %+v (%v)", list, err)
		}

		// The CLI passes --callback-url on: refused off the list, and
		// taken on it (the admin token has no secret of its own, so the
		// fallback signs).
		env := func(k string) string {
			return map[string]string{"ASKBRIDGE_URL": m.URL, "ASKBRIDGE_DATA_DIR": m.Settings.DataDir}[k]
		}
		cli := func(callback string) (int, string, string) {
			var out, errb bytes.Buffer
			c := app.Run(t.Context(), []string{"ask", "--no-wait", "--reversibility", "reversible", "--question", "From the CLI?",
				"--callback-url", callback}, env, nil, &out, &errb)
			return c, strings.TrimSpace(out.String()), errb.String()
		}
		if c, _, errOut := cli("https://elsewhere.test/hooks/cli"); c == 0 || !strings.Contains(errOut, "callback_url") {
			t.Fatalf("the CLI's ask off the list: exit %d, %s", c, errOut)
		}
		c, cliID, errOut := cli(recv.URL + "/hooks/cli")
		if c != 0 || len(cliID) != core.IDLen {
			t.Fatalf("the CLI's ask: exit %d, %q, %s", c, cliID, errOut)
		}

		for _, c := range []struct {
			route, callback, path, secret string
			cli                           bool
		}{
			{"", recv.URL + "/hooks/agent-c?run=1", "/hooks/agent-c", tokenSecret, false},
			{"hooked", "", "/hooks/route", routeSecret, false},
			{"", "", "/hooks/cli", fallback, true},
		} {
			id := core.QuestionID(cliID)
			if !c.cli {
				in := clarify("Which region?")
				in.Route, in.CallbackURL, in.ToolCallID = c.route, c.callback, "call-"+c.path
				q, err := agent.Ask(t.Context(), in)
				if err != nil {
					t.Fatal(err)
				}
				id = q.ID
			}
			if _, err := ops.Answer(t.Context(), id, client.AnswerRequest{Answer: "eu-west-1"}); err != nil {
				t.Fatal(err)
			}
			var got hit
			select {
			case got = <-hits:
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: no webhook arrived", c.path)
			}
			if got.path != c.path || got.h.Get(webhook.HeaderID) != core.WebhookKey(id) {
				t.Fatalf("webhook to %s with id %q", got.path, got.h.Get(webhook.HeaderID))
			}
			if err := webhook.Verify([]byte(c.secret), got.h, got.body, time.Now(), webhook.DefaultTolerance); err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
			waiter := agent
			if c.cli {
				waiter = client.New(m.URL, m.AdminToken)
			}
			wait, err := waiter.WaitOnce(t.Context(), id, 0)
			if err != nil {
				t.Fatal(err)
			}
			var sent client.WaitResponse
			if err := json.Unmarshal(got.body, &sent); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wait, &sent); diff != "" || sent.State != core.StateAnswered {
				t.Fatalf("the webhook body is not the wait's (-wait +webhook):\n%s", diff)
			}
		}
	})
}
