package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// twoRooms is one program posting to Slack and Discord at once, with a
// driver for each sharing it.
type twoRooms struct {
	slack   *apptest.SlackDriver
	discord *apptest.DiscordDriver
	agent   *client.Client
}

func startTwoRooms(t *testing.T, b apptest.Backend) *twoRooms {
	sd := &apptest.SlackDriver{Fake: slackfake.New()}
	t.Cleanup(sd.Fake.Close)
	for _, u := range []adaptertest.User{apptest.SlackAlice, apptest.SlackBob, apptest.SlackMallory} {
		sd.Fake.AddUser(slackfake.User{ID: u.ID, Name: u.Name})
	}
	dd := &apptest.DiscordDriver{Backend: b, Fake: discordfake.New()}
	t.Cleanup(dd.Fake.Close)
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": apptest.SlackSecret, "SLACK_API_URL": sd.Fake.APIURL(),
		"DISCORD_BOT_TOKEN": dd.Fake.Token, "DISCORD_APP_ID": dd.Fake.AppID, "DISCORD_PUBLIC_KEY": dd.Fake.PublicKey(),
		"DISCORD_API_URL": dd.Fake.APIURL(), "DISCORD_GATEWAY": "off",
	}
	s := b.Settings(t)
	from := apptest.FromEnv(t, env)
	s.Slack, s.Discord = from.Slack, from.Discord
	s.File = app.File{Routes: map[string]app.RouteFile{"ops": {
		Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: apptest.SlackRoom}, {Surface: core.SurfaceDiscord, ID: apptest.DcRoom}},
		Deciders: map[string][]string{
			"slack":   {apptest.SlackAlice.ID},
			"discord": {"53908232506183680"},
			"api":     {"ops"},
		},
	}}}
	m := apptest.StartClock(t, s, nil)
	sd.Main, dd.Main = m, m
	return &twoRooms{slack: sd, discord: dd, agent: client.New(m.URL, apptest.AgentA)}
}

func batchAsk(n int) client.AskRequest {
	req := client.AskRequest{Kind: core.KindApproval, Question: "Write these files?", RunID: "run-1", Route: "ops",
		Reversibility: core.Reversible}
	for i := range n {
		req.Calls = append(req.Calls, core.CallInput{ToolCallID: fmt.Sprintf("toolu_w%d_%d", n, i+1), Tool: "write_file",
			Arguments: json.RawMessage(fmt.Sprintf(`{"path":"/srv/f%d"}`, i+1)), Editable: &core.Editable{Keys: []string{"path"}}})
	}
	return req
}

// labelled finds the button with the given label.
func labelled(t *testing.T, c adaptertest.Card, label string) adaptertest.Button {
	t.Helper()
	for _, b := range c.Buttons {
		if b.Label == label {
			return b
		}
	}
	t.Fatalf("no %q button on %+v", label, c.Buttons)
	return adaptertest.Button{}
}

// TestBatchAcrossSurfaces: five calls on one card on Slack and on
// Discord, decided partly on each, one edited, then "Approve all" for the
// rest; the agent gets one tool result per call, each bound to its own
// id, in both shapes.
func TestBatchAcrossSurfaces(t *testing.T) {
	apptest.ForEachBackend(t, func(t *testing.T, b apptest.Backend) {
		br := startTwoRooms(t, b)
		q, err := br.agent.Ask(t.Context(), batchAsk(5))
		if err != nil {
			t.Fatal(err)
		}
		waiting := make(chan *client.WaitResponse, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, _ := br.agent.Wait(ctx, q.ID)
			waiting <- res
		}()
		alice, dAlice := apptest.SlackAlice, apptest.DcAsUser("53908232506183680")

		sc := br.slack.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) > 0 })
		br.slack.Click(t, alice, sc, labelled(t, sc, "1. Approve"))
		sc = br.slack.Card(t, q.ID, func(c adaptertest.Card) bool { return strings.Contains(c.Text, "Answered 1/5") })
		br.slack.Click(t, alice, sc, labelled(t, sc, "2. Approve"))

		dc := br.discord.Card(t, q.ID, func(c adaptertest.Card) bool { return strings.Contains(c.Text, "Answered 2/5") })
		br.discord.Reply(t, dAlice, dc, ptr(labelled(t, dc, "3. Deny")), "not f3")
		dc = br.discord.Card(t, q.ID, func(c adaptertest.Card) bool { return strings.Contains(c.Text, "Answered 3/5") })
		if _, told := br.discord.Edit(t, dAlice, dc, labelled(t, dc, "4. Edit and approve"), `{"path":"/srv/elsewhere"}`); told != "" {
			t.Fatalf("the edit was told %q", told)
		}

		sc = br.slack.Card(t, q.ID, func(c adaptertest.Card) bool { return strings.Contains(c.Text, "Answered 4/5") })
		br.slack.Click(t, alice, sc, labelled(t, sc, card.LabelApproveAll))

		var res *client.WaitResponse
		select {
		case res = <-waiting:
		case <-time.After(30 * time.Second):
			t.Fatal("the agent was never woken")
		}
		if res == nil || res.State != core.StateAnswered || len(res.Calls) != 5 {
			t.Fatalf("the agent woke with %+v", res)
		}
		want := []bool{true, true, false, true, true}
		for i, c := range res.Calls {
			id := q.Calls[i].ToolCallID
			if c.ToolCallID != id || c.Anthropic.ToolUseID != id || c.OpenAI.CallID != id || c.Resume.Structured.ToolCallID != id {
				t.Fatalf("result %d is bound to %s/%s/%s, want %s", i, c.ToolCallID, c.Anthropic.ToolUseID, c.OpenAI.CallID, id)
			}
			if a := c.Resume.Structured.Approved; a == nil || *a != want[i] {
				t.Fatalf("call %d approved %v, want %v", i+1, a, want[i])
			}
			if c.Anthropic.Content != c.Resume.Text || c.OpenAI.Output != c.Resume.Text {
				t.Fatalf("call %d: the shapes do not carry its text", i+1)
			}
		}
		if st := res.Calls[3].Resume.Structured; !st.Edited || string(st.ApprovedArguments) != `{"path":"/srv/elsewhere"}` {
			t.Fatalf("the edited call's result: %+v", st)
		}
		if !strings.Contains(res.Calls[2].Resume.Text, "not f3") {
			t.Fatalf("the denied call's result lacks its reason:\n%s", res.Calls[2].Resume.Text)
		}
		// Every card shows the same verdicts.
		for _, text := range []string{
			br.slack.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 0 }).Text,
			br.discord.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 0 }).Text,
		} {
			for _, v := range []string{"1. write_file: Approved", "3. write_file: Denied", "4. write_file: Approved with changes: path changed", "5. write_file: Approved"} {
				if !strings.Contains(text, v) {
					t.Fatalf("a closed card lacks %q:\n%s", v, text)
				}
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestBatchApproveAllRacesPerCallDeny: "Approve all" on Slack and a
// per-call deny on Discord at once give one outcome per call, the same
// on every card, and the loser hears the truth.
func TestBatchApproveAllRacesPerCallDeny(t *testing.T) {
	t.Parallel() // mostly waits on the rooms' send budgets
	apptest.ForEachBackend(t, func(t *testing.T, b apptest.Backend) {
		br := startTwoRooms(t, b)
		for round := range 4 {
			req := batchAsk(3)
			for i := range req.Calls {
				req.Calls[i].ToolCallID = fmt.Sprintf("toolu_race%d_%d", round, i)
			}
			q, err := br.agent.Ask(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			sc := br.slack.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) > 0 })
			dc := br.discord.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) > 0 })
			msg, _ := br.slack.Fake.Message(sc.Room, sc.ID)
			all := labelled(t, sc, card.LabelApproveAll)
			click := slackfake.Click(br.slack.Main.URL+"/slack/interactivity", apptest.SlackSecret,
				slackfake.ClickPayload(slackfake.User{ID: apptest.SlackAlice.ID, Name: apptest.SlackAlice.Name}, msg, slackfake.Button{ActionID: all.Value, Value: all.Value, Text: all.Label}))
			deny := labelled(t, dc, "2. Deny")
			submit := br.discord.Fake.Submit(apptest.DcUsers["53908232506183680"], dc.ID, deny.Value, map[string]string{"text": ""})

			var wg sync.WaitGroup
			var slackStatus int
			var slackErr, dcErr error
			var dcResp *discordfake.Response
			wg.Add(2)
			go func() { defer wg.Done(); slackStatus, _, slackErr = click.Send(context.Background()) }()
			go func() {
				defer wg.Done()
				_, dcResp, dcErr = br.discord.Fake.Post(br.discord.Endpoint(), submit, discordfake.Signed)
			}()
			wg.Wait()
			if slackErr != nil || slackStatus != http.StatusOK || dcErr != nil || dcResp == nil {
				t.Fatalf("round %d: slack %d %v, discord %v", round, slackStatus, slackErr, dcErr)
			}
			got, err := br.slack.Main.Service.Get(t.Context(), q.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != core.StateAnswered || len(got.Answers) != 3 {
				t.Fatalf("round %d: %s with %d decisions", round, got.State, len(got.Answers))
			}
			second, _ := got.Answered(q.Calls[1].ToolCallID)
			denyCounted := dcResp.Type == discordfake.ResponseUpdateMessage
			switch {
			case denyCounted && second.OptionID != core.DenyOption:
				t.Fatalf("round %d: Discord showed the deny counted; the call reads %s", round, second.OptionID)
			case !denyCounted && (second.OptionID != core.ApproveOption || !strings.Contains(dcResp.Content(), "Already closed")):
				t.Fatalf("round %d: the deny lost (%q) and the call reads %s", round, dcResp.Content(), second.OptionID)
			}
			verdict := "2. write_file: Approved"
			if denyCounted {
				verdict = "2. write_file: Denied"
			}
			br.slack.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 0 && strings.Contains(c.Text, verdict) })
			br.discord.Card(t, q.ID, func(c adaptertest.Card) bool { return len(c.Buttons) == 0 && strings.Contains(c.Text, verdict) })
		}
	})
}
