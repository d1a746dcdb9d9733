package chat

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestMixedSurfaceQuorum runs one program with Slack and Telegram on: an
// approval that needs Alice and Bob, Alice on Slack and Bob on Telegram.
// Alice's vote shows on both cards; Bob's vote on Telegram closes it; the
// Agent hears both; both cards show both votes; and each vote is kept
// under its person, with the surface it came from.
func TestMixedSurfaceQuorum(t *testing.T) {
	sd := &apptest.SlackDriver{Fake: slackfake.New()}
	t.Cleanup(sd.Fake.Close)
	for _, u := range []adaptertest.User{apptest.SlackAlice, apptest.SlackBob} {
		sd.Fake.AddUser(slackfake.User{ID: u.ID, Name: u.Name})
	}
	td := &apptest.TelegramDriver{Fake: telegramfake.Start(t, apptest.TgToken)}
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": apptest.SlackSecret, "SLACK_API_URL": sd.Fake.APIURL(),
		"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_WEBHOOK_SECRET": apptest.TgSecret,
		"TELEGRAM_WEBHOOK_URL": "https://askbridge.example/telegram/webhook", "TELEGRAM_API_URL": td.Fake.Endpoint(),
	}
	loaded := apptest.FromEnv(t, env)
	s := app.Settings{DataDir: t.TempDir(), Slack: loaded.Slack, Telegram: loaded.Telegram, File: app.File{
		People: map[string]app.PersonFile{
			"alice": {Name: adaptertest.TeamAlice, Slack: apptest.SlackAlice.ID},
			"bob":   {Name: adaptertest.TeamBob, Telegram: apptest.TgID(apptest.TgBob)},
		},
		Routes: map[string]app.RouteFile{"pair": {
			Rooms:  []core.Room{{Surface: core.SurfaceSlack, ID: apptest.SlackRoom}, {Surface: core.SurfaceTelegram, ID: strconv.FormatInt(apptest.TgRoom, 10)}},
			People: []string{"person:alice", "person:bob"}, Quorum: 2,
		}},
	}}
	m := apptest.Start(t, s)
	sd.Main, td.Main = m, m
	td.Fake.SetWebhookTarget(m.URL + telegram.WebhookPath)
	if !td.Fake.Wait(10*time.Second, func() bool { _, sec, _ := td.Fake.Webhook(); return sec == apptest.TgSecret }) {
		t.Fatal("the program never registered its webhook")
	}
	agent := client.New(m.URL, apptest.AgentA)
	q, err := agent.Ask(t.Context(), client.AskRequest{Kind: core.KindApproval, Question: "Rotate the root keys?", Route: "pair",
		Reversibility: core.HardToReverse, RunID: "run-1", ToolCallID: "toolu_keys",
		Tool: "kms.rotate", Arguments: []byte(`{"key":"root"}`)})
	if err != nil {
		t.Fatal(err)
	}
	approve := func(c adaptertest.Card) adaptertest.Button {
		t.Helper()
		for _, b := range c.Buttons {
			if r, err := core.DecodeRef(b.Value); err == nil && r.Action == core.RefApprove {
				return b
			}
		}
		t.Fatalf("no approve button on %+v", c)
		return adaptertest.Button{}
	}
	sd.Click(t, apptest.SlackAlice, sd.Card(t, q.ID, nil), approve(sd.Card(t, q.ID, nil)))
	tgHalf := td.Card(t, q.ID, func(c adaptertest.Card) bool {
		return len(c.Buttons) > 0 && strings.Contains(c.Text, "1 of 2 approvals: "+adaptertest.TeamAlice)
	})
	td.Click(t, apptest.TgAsUser(apptest.TgBob), tgHalf, approve(tgHalf))
	res, err := agent.Wait(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != core.StateAnswered || !*res.Resume.Structured.Approved || len(res.Resume.Structured.Votes) != 2 {
		t.Fatalf("the agent woke with %+v", res.Resume)
	}
	for _, c := range []adaptertest.Card{
		sd.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 0 }),
		td.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 0 }),
	} {
		if !strings.Contains(c.Text, "2 of 2 approvals: "+adaptertest.TeamAlice+", "+adaptertest.TeamBob) {
			t.Fatalf("a closed card does not show both votes:\n%s", c.Text)
		}
	}
	got, err := m.Service.Get(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Votes[0].Decider.Surface != core.SurfaceSlack || got.Votes[0].Key != "person:alice" ||
		got.Votes[1].Decider.Surface != core.SurfaceTelegram || got.Votes[1].Key != "person:bob" {
		t.Fatalf("votes %+v", got.Votes)
	}
}
