package app

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
	"github.com/askbridge/askbridge/core"
)

// TestMixedSurfaceQuorum runs one program with Slack and Telegram on: an
// approval that needs Alice and Bob, Alice on Slack and Bob on Telegram.
// Alice's vote shows on both cards; Bob's vote on Telegram closes it; the
// agent hears both; both cards show both votes; and each vote is kept
// under its person, with the surface it came from.
func TestMixedSurfaceQuorum(t *testing.T) {
	sd := &slackDriver{fake: slackfake.New()}
	t.Cleanup(sd.fake.Close)
	for _, u := range []adaptertest.User{slackAlice, slackBob} {
		sd.fake.AddUser(slackfake.User{ID: u.ID, Name: u.Name})
	}
	td := &telegramDriver{fake: telegramfake.Start(t, tgToken)}
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": slackSecret, "SLACK_API_URL": sd.fake.APIURL(),
		"TELEGRAM_BOT_TOKEN": tgToken, "TELEGRAM_WEBHOOK_SECRET": tgSecret,
		"TELEGRAM_WEBHOOK_URL": "https://askbridge.example/telegram/webhook", "TELEGRAM_API_URL": td.fake.Endpoint(),
	}
	loaded := fromEnv(t, env)
	s := Settings{DataDir: t.TempDir(), Slack: loaded.Slack, Telegram: loaded.Telegram, File: File{
		People: map[string]PersonFile{
			"alice": {Name: adaptertest.TeamAlice, Slack: slackAlice.ID},
			"bob":   {Name: adaptertest.TeamBob, Telegram: tgID(tgBob)},
		},
		Routes: map[string]RouteFile{"pair": {
			Rooms:  []core.Room{{Surface: core.SurfaceSlack, ID: slackRoom}, {Surface: core.SurfaceTelegram, ID: strconv.FormatInt(tgRoom, 10)}},
			People: []string{"person:alice", "person:bob"}, Quorum: 2,
		}},
	}}
	m := start(t, s)
	sd.m, td.main = m, m
	td.fake.SetWebhookTarget(m.URL + telegram.WebhookPath)
	if !td.fake.Wait(10*time.Second, func() bool { _, sec, _ := td.fake.Webhook(); return sec == tgSecret }) {
		t.Fatal("the program never registered its webhook")
	}
	agent := client.New(m.URL, agentA)
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
	sd.Click(t, slackAlice, sd.Card(t, q.ID, nil), approve(sd.Card(t, q.ID, nil)))
	tgHalf := td.Card(t, q.ID, func(c adaptertest.Card) bool {
		return len(c.Buttons) > 0 && strings.Contains(c.Text, "1 of 2 approvals: "+adaptertest.TeamAlice)
	})
	td.Click(t, tgAsUser(tgBob), tgHalf, approve(tgHalf))
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
