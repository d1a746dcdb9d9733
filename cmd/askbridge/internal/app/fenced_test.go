package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/slack/slackfake"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence/fencetest"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// TestNothingUnfencedReachesAnAgent is law 11's property test. It asks a
// question of every kind and feature, plants a unique hostile marker in
// every field a person writes and in every decider's display name (a
// Slack user's own; a Discord member's guild nickname, global_name, and
// username alone; a Telegram user's first_name, last_name, and username
// alone; and the configured people's, on Slack and behind the API and
// console tokens), drives each to its end from each kind of door (the
// API, Slack, Discord, Telegram, the console, the MCP host door, the
// Clock, a cancel, the end of the run), and then reads everything an
// Agent can read about it (see agentReads). One program runs all three
// chat fakes; the Discord and Telegram drivers take this test's people
// through their users field. It
// fails if any marker appears outside a well-formed fenced region, and
// if a marker never reached the agent fenced (a planted field that went
// nowhere proves nothing). The markers and checks are fence/fencetest's,
// which the MCP Tasks and hook doors' property tests share.
//
// The one exception is approved_arguments (fencetest.ApprovedArguments),
// in a resume's data and in the
// MCP tools' structured content: they are the arguments the call must be
// made with, so they travel as JSON data (their keys are only the
// Agent's own editable ones, and arguments_sha256 binds them); in the
// text they are fenced like everything else.
//
// A new kind or feature joins by adding a row to cases. The MCP reads
// are get_answer's, whose structured content is the whole of which each
// asking tool's is a part.
func TestNothingUnfencedReachesAnAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	mk := fencetest.New()

	const ops2Tok, deskTok = "operator-two-token-0123456789", "desk-operator-token-0123456789"
	sam := adaptertest.User{ID: "U0SAMPLE1", Name: mk.Carried("a Slack user's display name")}
	carol := adaptertest.User{ID: "U0CAROL01", Name: "Carol on Slack"}
	fake := slackfake.New()
	t.Cleanup(fake.Close)
	for _, u := range []adaptertest.User{sam, carol} {
		fake.AddUser(slackfake.User{ID: u.ID, Name: u.Name})
	}
	// Discord's and Telegram's people, each with a marker in the one name
	// the adapter shows (Discord: the guild nickname, else the global
	// Name, else the username; Telegram: first and last name, else the
	// username), and the fakes that send their clicks, replies and modals.
	dcNick := discordfake.User{ID: "53908232506183700", Name: "Nell", Nick: mk.Carried("a Discord member's guild nickname")}
	dcGlobal := discordfake.User{ID: "53908232506183701", Name: mk.Carried("a Discord user's global_name"), Username: "gwen"}
	dcHandle := discordfake.User{ID: "53908232506183702", Username: mk.Carried("a Discord user's username (no global_name)")}
	tgFirst := tgbotapi.User{ID: 400000001, FirstName: mk.Carried("a Telegram user's first_name"), LastName: "Lane", UserName: "fay_lane"}
	tgLast := tgbotapi.User{ID: 400000002, FirstName: "Tom", LastName: mk.Carried("a Telegram user's last_name")}
	tgHandle := tgbotapi.User{ID: 400000003, UserName: mk.Carried("a Telegram user's username (no first_name or last_name)")}
	dfake := discordfake.New()
	t.Cleanup(dfake.Close)
	tfake := telegramfake.Start(t, apptest.TgToken)

	env := map[string]string{"SLACK_BOT_TOKEN": "xoxb-test-bot-token", "SLACK_SIGNING_SECRET": apptest.SlackSecret, "SLACK_API_URL": fake.APIURL(),
		"DISCORD_BOT_TOKEN": dfake.Token, "DISCORD_APP_ID": dfake.AppID, "DISCORD_PUBLIC_KEY": dfake.PublicKey(),
		"DISCORD_API_URL": dfake.APIURL(), "DISCORD_GATEWAY": "off",
		"TELEGRAM_BOT_TOKEN": apptest.TgToken, "TELEGRAM_WEBHOOK_SECRET": apptest.TgSecret,
		"TELEGRAM_WEBHOOK_URL": "https://askbridge.example/telegram/webhook", "TELEGRAM_API_URL": tfake.Endpoint()}
	loaded := apptest.FromEnv(t, env)
	clock := core.NewSimClock(time.Now())
	deciders := map[string][]string{"slack": {sam.ID}, "api": {"*"}, "mcp": {"agent-a"}}
	routes := map[string]app.RouteFile{
		core.DefaultRoute: {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: apptest.SlackRoom}}, Deciders: deciders,
			People: []string{core.PersonPrefix + "carol"}, MaxQuorum: 2, EscalateTo: "later"},
		"later": {Rooms: []core.Room{{Surface: core.SurfaceSlack, ID: apptest.SlackRoom}}, Deciders: map[string][]string{"api": {"*"}}},
		"desk":  {People: []string{core.PersonPrefix + "dora"}},
		// The operator's words in a rule reach the agent fenced too.
		"policy": {Deciders: map[string][]string{"api": {"*"}}, Rules: []app.RuleFile{
			{Name: "no-fetch", When: `tool == "fetch"`, Decide: "deny", Reason: mk.Carried("a policy rule's deny reason")},
			{Name: "reads", When: `tool == "read_file"`, Decide: "allow", Reason: mk.Carried("a policy rule's allow reason")},
		}},
	}
	// Each Slack, Discord and Telegram row that clicks has a room of its
	// own, so no row's card waits on another's send budget (the API's
	// rows post theirs in SlackRoom).
	slRooms := map[string]string{"sl-pick": "C0FENCE001", "sl-deny": "C0FENCE002", "sl-quorum": "C0FENCE003"}
	for name, room := range slRooms {
		r := routes[core.DefaultRoute]
		r.Rooms, r.EscalateTo = []core.Room{{Surface: core.SurfaceSlack, ID: room}}, ""
		routes[name] = r
	}
	dcRooms := map[string]string{"dc-deny": "345626669114982410", "dc-quorum": "345626669114982411", "dc-form": "345626669114982412"}
	for name, room := range dcRooms {
		routes[name] = app.RouteFile{Rooms: []core.Room{{Surface: core.SurfaceDiscord, ID: room}}, MaxQuorum: 2,
			Deciders: map[string][]string{"discord": {dcNick.ID, dcGlobal.ID, dcHandle.ID}}}
	}
	tgRooms := map[string]int64{"tg-reply": -1001234567891, "tg-pick": -1001234567892, "tg-form": -1001234567893}
	for name, room := range tgRooms {
		routes[name] = app.RouteFile{Rooms: []core.Room{{Surface: core.SurfaceTelegram, ID: strconv.FormatInt(room, 10)}},
			Deciders: map[string][]string{"telegram": {apptest.TgID(tgFirst), apptest.TgID(tgLast), apptest.TgID(tgHandle)}}}
	}
	m := apptest.StartClock(t, app.Settings{
		Slack: loaded.Slack, Discord: loaded.Discord, Telegram: loaded.Telegram,
		File: app.File{
			Tokens: []app.TokenFile{{Name: "ops2", Role: "operator", Token: ops2Tok}, {Name: "desk", Role: "operator", Token: deskTok}},
			People: map[string]app.PersonFile{
				"opal":  {Name: mk.Carried("the display name of the person behind the ops token"), Tokens: []string{"ops"}},
				"vera":  {Name: mk.Carried("the display name of the person behind the ops2 token"), Tokens: []string{"ops2"}},
				"carol": {Name: mk.Carried("a configured person's display name (Slack)"), Slack: carol.ID},
				"dora":  {Name: mk.Carried("the display name of the person signing in to the console"), Tokens: []string{"desk"}},
			},
			Routes: routes,
		},
	}, clock)
	tfake.SetWebhookTarget(m.URL + telegram.WebhookPath)
	if !tfake.Wait(10*time.Second, func() bool { _, sec, _ := tfake.Webhook(); return sec == apptest.TgSecret }) {
		t.Fatal("the program never registered its Telegram webhook")
	}
	dc := &apptest.DiscordDriver{Fake: dfake, Main: m, Users: map[string]discordfake.User{dcNick.ID: dcNick, dcGlobal.ID: dcGlobal, dcHandle.ID: dcHandle}}
	tg := &apptest.TelegramDriver{Fake: tfake, Main: m, Users: []tgbotapi.User{tgFirst, tgLast, tgHandle}}
	slack := &apptest.SlackDriver{Fake: fake, Main: m}
	agent, ops, ops2 := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok), client.New(m.URL, ops2Tok)

	reads := newAgentReads(t, ctx, m, agent)

	// Agents read no list and no events: the operators' view of people.
	for _, path := range []string{"/v1/questions", "/v1/events"} {
		if status, body := reads.raw(t, http.MethodGet, path); status != http.StatusForbidden {
			t.Fatalf("GET %s as an agent: %d %s, want 403", path, status, body)
		}
	}

	answer := func(c *client.Client, req client.AnswerRequest) closer { return answering(ctx, c, req) }
	refButton := func(t *testing.T, c adaptertest.Card, want func(core.Ref) bool) adaptertest.Button {
		t.Helper()
		for _, b := range c.Buttons {
			if r, err := core.DecodeRef(b.Value); err == nil && want(r) {
				return b
			}
		}
		t.Fatalf("the card has no such button: %+v", c.Buttons)
		return adaptertest.Button{}
	}
	button := func(t *testing.T, c adaptertest.Card, action core.RefAction, option int) adaptertest.Button {
		t.Helper()
		return refButton(t, c, func(r core.Ref) bool { return r.Action == action && (action != core.RefOption || r.Option == option) })
	}
	itemButton := func(t *testing.T, c adaptertest.Card, action core.RefAction, item, option int) adaptertest.Button {
		t.Helper()
		return refButton(t, c, func(r core.Ref) bool { return r.Action == action && r.Item == item && r.Option == option })
	}
	dcAs := func(u discordfake.User) adaptertest.User { return adaptertest.User{ID: u.ID} }
	dcCardOn := func(t *testing.T, route string, id core.QuestionID) adaptertest.Card {
		t.Helper()
		return dc.CardIn(t, dcRooms[route], id, nil)
	}
	tgCardOn := func(t *testing.T, route string, id core.QuestionID) adaptertest.Card {
		t.Helper()
		return tg.CardIn(t, tgRooms[route], id, nil)
	}
	// console signs in to the console as the desk token's person and
	// posts form to the question's answer form, as a browser would: the
	// sign-in form's CSRF cookie and field, then the session's.
	console := func(form url.Values) func(t *testing.T, id core.QuestionID) {
		return func(t *testing.T, id core.QuestionID) {
			t.Helper()
			jar, err := cookiejar.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			csrf := ""
			do := func(method, path string, form url.Values, want int) string {
				t.Helper()
				var body io.Reader
				if form != nil {
					form.Set("csrf", csrf)
					body = strings.NewReader(form.Encode())
				}
				req, err := http.NewRequestWithContext(ctx, method, m.URL+path, body)
				if err != nil {
					t.Fatal(err)
				}
				if form != nil {
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				page, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != want {
					t.Fatalf("console %s %s: %d, want %d\n%s", method, path, resp.StatusCode, want, page)
				}
				if f := csrfField.FindSubmatch(page); f != nil {
					csrf = string(f[1])
				}
				return string(page)
			}
			do(http.MethodGet, "/", nil, http.StatusOK)
			do(http.MethodPost, "/signin", url.Values{"token": {deskTok}}, http.StatusSeeOther)
			do(http.MethodGet, "/q/"+string(id), nil, http.StatusOK)
			page := do(http.MethodPost, "/q/"+string(id)+"/answer", form, http.StatusOK)
			if strings.Contains(page, `name="confirm" value="yes"`) {
				// A hard-to-reverse choice is confirmed once, as its page asks.
				confirmed := maps.Clone(form)
				confirmed.Set("confirm", "yes")
				page = do(http.MethodPost, "/q/"+string(id)+"/answer", confirmed, http.StatusOK)
			}
			if !strings.Contains(page, "Recorded") {
				t.Fatalf("the console did not record the answer:\n%s", page)
			}
		}
	}
	click := func(route string, action core.RefAction, option int) func(t *testing.T, id core.QuestionID) {
		return func(t *testing.T, id core.QuestionID) {
			t.Helper()
			c := slack.CardIn(t, slRooms[route], id, nil)
			slack.Click(t, sam, c, button(t, c, action, option))
		}
	}
	advance := func(d time.Duration) func(t *testing.T, id core.QuestionID) {
		return func(t *testing.T, id core.QuestionID) { clock.Advance(d) }
	}
	escalated := func(t *testing.T, id core.QuestionID) {
		t.Helper()
		clock.Advance(61 * time.Minute)
		for {
			q, err := agent.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if q.Renotified > 0 {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatal("the question was never escalated")
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	approval := func(tool, args string, editable ...string) client.AskRequest {
		r := client.AskRequest{Kind: core.KindApproval, Question: "May I call " + tool + "?", Reversibility: core.HardToReverse,
			Tool: tool, Arguments: json.RawMessage(args)}
		if len(editable) > 0 {
			r.Editable = &core.Editable{Keys: editable}
		}
		return r
	}
	decision := client.AskRequest{Kind: core.KindDecision, Question: "Which database?", Reversibility: core.HardToReverse, Options: []core.Option{
		{ID: "pg", Title: "Postgres", Writeup: "Operated by us.", Recommended: true},
		{ID: "ddb", Title: "DynamoDB", Writeup: "Managed."},
	}}
	form := client.AskRequest{Kind: core.KindForm, Question: "Two choices", Reversibility: core.Reversible, Items: []core.FormItem{
		{ID: "logger", Question: "Which logger?", Options: []core.FormOption{{ID: "slog", Label: "slog"}, {ID: "zl", Label: "zerolog"}}},
		{ID: "name", Question: "Package name?", Options: []core.FormOption{{ID: "ab", Label: "ab"}, {ID: "askb", Label: "askbridge"}}},
	}}
	batch := client.AskRequest{Kind: core.KindApproval, Question: "Write these files?", Reversibility: core.Reversible, Calls: []core.CallInput{
		{ToolCallID: "call_a", Tool: "write_file", Arguments: json.RawMessage(`{"path":"a","body":"x"}`), Editable: &core.Editable{Keys: []string{"body"}}},
		{ToolCallID: "call_b", Tool: "write_file", Arguments: json.RawMessage(`{"path":"b"}`)},
		{ToolCallID: "call_c", Tool: "write_file", Arguments: json.RawMessage(`{"path":"c"}`)},
	}}
	with := func(r client.AskRequest, set func(*client.AskRequest)) client.AskRequest { set(&r); return r }
	on := func(route string, r client.AskRequest) client.AskRequest { r.Route = route; return r }
	edited := func(field string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"to": mk.Carried(field)})
		return b
	}

	// cases is the table of kinds and features: a new one is a row. Each
	// row asks as agent-a (through the API) and closes the question its
	// own way; state is how it must end. The rows that sign requests with
	// the time (Slack's and Discord's) come before those that move the
	// program's clock.
	cases := []struct {
		name  string
		ask   client.AskRequest
		close func(t *testing.T, id core.QuestionID)
		state core.State
	}{
		{"clarification answered in a Slack thread by a configured person", clarify("Which region?"),
			func(t *testing.T, id core.QuestionID) {
				slack.Reply(t, carol, slack.Card(t, id, nil), nil, mk.Carried("a clarification's answer (Slack)"))
			},
			core.StateAnswered},
		{"clarification answered through the API", clarify("Which zone?"),
			answer(ops, client.AnswerRequest{Answer: mk.Carried("a clarification's answer (API)")}), core.StateAnswered},
		{"clarification answered in the agent's MCP host", clarify("Which bucket?"),
			func(t *testing.T, id core.QuestionID) {
				if _, err := agent.AnswerInHost(ctx, id, client.MCPAnswerRequest{Answer: mk.Carried("a clarification's answer (MCP host)")}); err != nil {
					t.Fatal(err)
				}
			}, core.StateAnswered},
		{"decision clicked in Slack", on("sl-pick", decision), click("sl-pick", core.RefOption, 1), core.StateAnswered},
		{"decision answered with a note", decision,
			answer(ops, client.AnswerRequest{ChosenOptionID: "ddb", Answer: mk.Carried("a decision's note")}), core.StateAnswered},
		{"approval approved with a reason", approval("deploy", `{"env":"prod"}`),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("an approval's reason")}), core.StateAnswered},
		{"approval denied with a reason", approval("drop_table", `{"table":"users"}`),
			answer(ops2, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: mk.Carried("a deny reason")}), core.StateAnswered},
		{"approval denied in Slack", on("sl-deny", approval("drop_table", `{"table":"orders"}`)), click("sl-deny", core.RefDeny, 0), core.StateAnswered},
		{"approval approved with edits", approval("mv", `{"to":"x"}`, "to"),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Arguments: edited("an edited argument's value"), Answer: mk.Carried("an edit's reason")}),
			core.StateAnswered},
		{"form answered in parts, with free text", form, inTurn(
			answer(ops, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "logger", OptionID: "zl"}}}),
			answer(ops2, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "name", Text: mk.Carried("a form item's free text")}}}),
		), core.StateAnswered},
		{"batch decided call by call, with reasons and edits", batch, inTurn(
			answer(ops2, client.AnswerRequest{Calls: []core.CallDecision{
				{ToolCallID: "call_a", OptionID: core.ApproveOption, Reason: mk.Carried("a batch call's approve reason"),
					Arguments: json.RawMessage(`{"path":"a","body":` + string(must(json.Marshal(mk.Carried("a batch call's edited argument")))) + `}`)},
				{ToolCallID: "call_b", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's deny reason")},
			}}),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("a batch's reason for the rest")}),
		), core.StateAnswered},
		{"quorum of two with notes", on("sl-quorum", with(approval("rotate_keys", `{"all":true}`), func(r *client.AskRequest) { r.Quorum = 2 })), inTurn(
			answer(ops2, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("a vote's note")}),
			click("sl-quorum", core.RefApprove, 0),
		), core.StateAnswered},
		{"clarification answered by a reply in Telegram", on("tg-reply", clarify("Which cluster?")),
			func(t *testing.T, id core.QuestionID) {
				tg.Reply(t, apptest.TgAsUser(tgLast), tgCardOn(t, "tg-reply", id), nil, mk.Carried("a clarification's answer (Telegram reply)"))
			}, core.StateAnswered},
		{"decision picked in Telegram", on("tg-pick", decision),
			func(t *testing.T, id core.QuestionID) {
				c := tgCardOn(t, "tg-pick", id)
				tg.Click(t, apptest.TgAsUser(tgFirst), c, button(t, c, core.RefOption, 1))
			}, core.StateAnswered},
		{"form answered in Telegram, with free text", on("tg-form", form),
			func(t *testing.T, id core.QuestionID) {
				c := tgCardOn(t, "tg-form", id)
				tg.Click(t, apptest.TgAsUser(tgHandle), c, itemButton(t, c, core.RefOption, 0, 1))
				b := itemButton(t, c, core.RefText, 1, 0)
				tg.Reply(t, apptest.TgAsUser(tgHandle), c, &b, mk.Carried("a form item's free text (Telegram)"))
			}, core.StateAnswered},
		{"approval denied in Discord with a reason", on("dc-deny", approval("drop_table", `{"table":"events"}`)),
			func(t *testing.T, id core.QuestionID) {
				c := dcCardOn(t, "dc-deny", id)
				dc.DenyWith(t, dcAs(dcGlobal), c, button(t, c, core.RefDeny, 0), mk.Carried("a deny reason (Discord modal)"))
			}, core.StateAnswered},
		{"quorum of two voted in Discord", on("dc-quorum", with(approval("rotate_keys", `{"all":false}`), func(r *client.AskRequest) { r.Quorum = 2 })),
			func(t *testing.T, id core.QuestionID) {
				c := dcCardOn(t, "dc-quorum", id)
				dc.Click(t, dcAs(dcHandle), c, button(t, c, core.RefApprove, 0))
				dc.Click(t, dcAs(dcNick), c, button(t, c, core.RefApprove, 0))
			}, core.StateAnswered},
		{"form answered in Discord, with free text", on("dc-form", form),
			func(t *testing.T, id core.QuestionID) {
				c := dcCardOn(t, "dc-form", id)
				dc.Click(t, dcAs(dcGlobal), c, itemButton(t, c, core.RefOption, 0, 0))
				b := itemButton(t, c, core.RefText, 1, 0)
				dc.Reply(t, dcAs(dcNick), c, &b, mk.Carried("a form item's free text (Discord modal)"))
			}, core.StateAnswered},
		{"approval approved in the console with a note", on("desk", approval("deploy", `{"env":"staging"}`)),
			console(url.Values{"option": {core.ApproveOption}, "text": {mk.Carried("an approval's note (console)")}}), core.StateAnswered},
		{"approval that grants a standing approval", with(approval("lint", `{"fix":true}`), func(r *client.AskRequest) { r.RunID, r.Reversibility = "run-standing", core.Reversible }),
			answer(ops, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("a standing grant's reason"), Standing: &core.StandingRequest{Scope: core.StandingRun}}),
			core.StateAnswered},
		{"approval a standing approval covered", with(approval("lint", `{"fix":true}`), func(r *client.AskRequest) { r.RunID, r.Reversibility = "run-standing", core.Reversible }),
			func(*testing.T, core.QuestionID) {}, core.StateAnswered},
		{"approval denied by a policy rule", on("policy", approval("fetch", `{"url":"https://example.com"}`)),
			func(*testing.T, core.QuestionID) {}, core.StateAnswered},
		{"approval allowed by a policy rule", on("policy", approval("read_file", `{"path":"README.md"}`)),
			func(*testing.T, core.QuestionID) {}, core.StateAnswered},
		{"batch with calls decided by policy rules", on("policy", client.AskRequest{Kind: core.KindApproval, Question: "These?", Reversibility: core.Reversible,
			Calls: []core.CallInput{
				{ToolCallID: "call_fetch", Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`)},
				{ToolCallID: "call_read", Tool: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
				{ToolCallID: "call_write", Tool: "write_file", Arguments: json.RawMessage(`{"path":"x"}`)},
			}}),
			answer(ops, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: "call_write", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's reason beside rule-decided calls")}}}),
			core.StateAnswered},
		{"escalated, then answered", with(clarify("Who owns billing?"), func(r *client.AskRequest) {
			r.Timeout, r.OnTimeout = client.Duration(time.Hour), core.OnTimeoutEscalate
		}), inTurn(escalated, answer(ops2, client.AnswerRequest{Answer: mk.Carried("an answer after escalation")})), core.StateAnswered},
		{"escalated, then timed out", with(clarify("Who owns search?"), func(r *client.AskRequest) {
			r.Timeout, r.OnTimeout = client.Duration(time.Hour), core.OnTimeoutEscalate
		}), inTurn(escalated, advance(3*time.Hour)), core.StateTimedOut},
		{"timed out", with(clarify("Anyone there?"), func(r *client.AskRequest) { r.Timeout = client.Duration(time.Hour) }),
			advance(2 * time.Hour), core.StateTimedOut},
		{"declined", clarify("Tabs or spaces?"),
			func(t *testing.T, id core.QuestionID) {
				if _, err := ops.Decline(ctx, id); err != nil {
					t.Fatal(err)
				}
			}, core.StateDeclined},
		{"cancelled by an operator", clarify("Rename the repo?"),
			func(t *testing.T, id core.QuestionID) {
				if _, err := ops.Cancel(ctx, id, mk.Carried("an operator's cancel reason")); err != nil {
					t.Fatal(err)
				}
			}, core.StateCancelled},
		{"cancelled by the agent", clarify("Still needed?"),
			func(t *testing.T, id core.QuestionID) {
				if _, err := agent.Cancel(ctx, id, "plans changed"); err != nil { // the agent's own words
					t.Fatal(err)
				}
			}, core.StateCancelled},
		{"expired with its run", with(clarify("Before the run ends?"), func(r *client.AskRequest) { r.RunID = "run-ending" }),
			func(t *testing.T, id core.QuestionID) {
				if _, err := agent.EndRun(ctx, "run-ending"); err != nil {
					t.Fatal(err)
				}
			}, core.StateExpired},
	}
	asked := map[core.Shape]bool{}
	for i, c := range cases {
		shape := core.Shape(c.ask.Kind)
		if len(c.ask.Calls) > 0 {
			shape = core.ShapeBatch
		}
		asked[shape] = true
		t.Run(c.name, func(t *testing.T) {
			req := c.ask
			req.ToolCallID = fmt.Sprintf("toolu_%02d", i)
			if req.RunID == "" {
				req.RunID = "run-1"
			}
			reads.askClosed(t, ctx, mk, req, c.close, c.state)
		})
	}
	for _, sh := range core.Shapes() {
		if !asked[sh] {
			t.Errorf("no row asks a %s: every kind of question proves here that its resume is fenced", sh)
		}
	}
	mk.CheckCarried(t, "the agent")
}
