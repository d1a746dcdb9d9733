package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/adapters/ntfy/ntfyfake"
	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/fence/fencetest"
)

// TestFencedAfterPartialProgressAndOnMoreDoors carries law 11's property
// test (TestNothingUnfencedReachesAnAgent, whose markers and reads it
// shares) to what that test's rows close at once: questions that close
// after part of them was answered (a form with one free-text item, a
// batch with a call's reason and edit, a quorum with one vote's words,
// then a timeout, a cancel or a withdrawal; a quorum's timeout reason
// names its voters and the options' titles), a decision settled by
// votes, a deny vote with words, and the names of deciders on Teams, by
// email and by ntfy. Each row plants markers; every marker must reach the
// agent, and only inside a fence.
func TestFencedAfterPartialProgressAndOnMoreDoors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	mk := fencetest.New()

	const ops2Tok, linkBase, actorKey = "operator-two-token-0123456789", "https://askbridge.invalid", "the fence test's actor key, long enough"
	const mail, topic = "erin@example.test", "finn-phone"
	tmUser := teamsfake.User{ID: "29:1fence", AAD: "dddddddd-4444-4444-8444-dddddddddddd", Name: mk.Carried("a Teams user's display name")}
	tfake := teamsfake.Start(t, apptest.TmAppID, apptest.TmSecret)
	smtp := emailfake.Start(t, emailfake.Options{})
	nfake := ntfyfake.Start(t, "")
	host, port, _ := strings.Cut(smtp.Addr, ":")
	loaded := apptest.FromEnv(t, map[string]string{
		"TEAMS_APP_ID": apptest.TmAppID, "TEAMS_APP_PASSWORD": apptest.TmSecret, "TEAMS_TENANT_ID": teamsfake.Tenant,
		"TEAMS_SERVICE_URL": tfake.URL(), "TEAMS_TOKEN_URL": tfake.TokenURL(), "TEAMS_OPENID_URL": tfake.OpenIDURL(),
		"EMAIL_SMTP_HOST": host, "EMAIL_SMTP_PORT": port, "EMAIL_SMTP_TLS": "none", "EMAIL_FROM": "askbridge@bridge.example.test",
		"NTFY_URL": nfake.URL, "ASKBRIDGE_PUBLIC_URL": linkBase,
	})
	clock := core.NewSimClock(time.Now())
	api := map[string][]string{"api": {"*"}}
	m := apptest.StartClock(t, app.Settings{Teams: loaded.Teams, Email: loaded.Email, Ntfy: loaded.Ntfy, PublicURL: loaded.PublicURL,
		ActorKey: app.Secret(actorKey),
		File: app.File{
			Tokens: []app.TokenFile{{Name: "ops2", Role: "operator", Token: ops2Tok}},
			People: map[string]app.PersonFile{
				"opal": {Name: mk.Carried("the display name of the person behind the ops token"), Tokens: []string{"ops"}},
				"vera": {Name: mk.Carried("the display name of the person behind the ops2 token"), Tokens: []string{"ops2"}},
				"erin": {Name: mk.Carried("an email recipient's configured name"), Email: mail},
				"finn": {Name: mk.Carried("an ntfy subscriber's configured name"), Ntfy: topic},
			},
			Routes: map[string]app.RouteFile{
				core.DefaultRoute: {Deciders: api, MaxQuorum: 2},
				"teams":           {Rooms: []core.Room{{Surface: core.SurfaceTeams, ID: apptest.TmChannel}}, Deciders: map[string][]string{"teams": {tmUser.AAD}}},
				// A one-way door's recipient is a room of its own, as the file's
				// email: and ntfy: keys become.
				"email": {Rooms: []core.Room{{Surface: core.SurfaceEmail, ID: mail}}, People: []string{core.PersonPrefix + "erin"}},
				"ntfy":  {Rooms: []core.Room{{Surface: core.SurfaceNtfy, ID: topic}}, People: []string{core.PersonPrefix + "finn"}},
			},
		},
	}, clock)
	tfake.SetTarget(m.URL + teams.MessagesPath)
	agent, ops, ops2 := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok), client.New(m.URL, ops2Tok)
	reads := newAgentReads(t, ctx, m, agent)
	door := oneWayDoors{t: t, m: m, linkBase: linkBase, key: actorKey}

	answer := func(c *client.Client, req client.AnswerRequest) closer { return answering(ctx, c, req) }
	timeOut := func(t *testing.T, id core.QuestionID) { clock.Advance(2 * time.Hour) }
	withdraw := func(c *client.Client, reason string) func(t *testing.T, id core.QuestionID) {
		return func(t *testing.T, id core.QuestionID) {
			t.Helper()
			if _, err := c.Cancel(ctx, id, reason); err != nil {
				t.Fatal(err)
			}
		}
	}
	approval := func(route, tool string, quorum int) client.AskRequest {
		return client.AskRequest{Kind: core.KindApproval, Question: "May I call " + tool + "?", Reversibility: core.HardToReverse,
			Route: route, Tool: tool, Arguments: json.RawMessage(`{"n":1}`), Quorum: quorum, Timeout: client.Duration(time.Hour)}
	}
	decision := client.AskRequest{Kind: core.KindDecision, Question: "Which database?", Reversibility: core.HardToReverse, Quorum: 2,
		Timeout: client.Duration(time.Hour), Options: []core.Option{
			{ID: "pg", Title: "Postgres", Writeup: "Operated by us.", Recommended: true},
			{ID: "ddb", Title: "DynamoDB", Writeup: "Managed."},
		}}
	form := client.AskRequest{Kind: core.KindForm, Question: "Two choices", Reversibility: core.Reversible, Timeout: client.Duration(time.Hour),
		Items: []core.FormItem{
			{ID: "logger", Question: "Which logger?", Options: []core.FormOption{{ID: "slog", Label: "slog"}, {ID: "zl", Label: "zerolog"}}},
			{ID: "name", Question: "Package name?", Options: []core.FormOption{{ID: "ab", Label: "ab"}, {ID: "askb", Label: "askbridge"}}},
		}}
	batch := client.AskRequest{Kind: core.KindApproval, Question: "Write these files?", Reversibility: core.Reversible, Timeout: client.Duration(time.Hour),
		Calls: []core.CallInput{
			{ToolCallID: "call_a", Tool: "write_file", Arguments: json.RawMessage(`{"path":"a","body":"x"}`), Editable: &core.Editable{Keys: []string{"body"}}},
			{ToolCallID: "call_b", Tool: "write_file", Arguments: json.RawMessage(`{"path":"b"}`)},
			{ToolCallID: "call_c", Tool: "write_file", Arguments: json.RawMessage(`{"path":"c"}`)},
		}}
	editA := func(field string) core.CallDecision {
		body := must(json.Marshal(mk.Carried(field + ": an edited argument")))
		return core.CallDecision{ToolCallID: "call_a", OptionID: core.ApproveOption, Reason: mk.Carried(field + ": an approve reason"),
			Arguments: json.RawMessage(`{"path":"a","body":` + string(body) + `}`)}
	}

	// The rows that act on a signed request (Teams' tokens) come before
	// those that move the program's clock.
	cases := []struct {
		name  string
		ask   client.AskRequest
		close func(t *testing.T, id core.QuestionID)
		state core.State
	}{
		{"approval denied in Teams with a reason", approval("teams", "drop_table", 0),
			func(t *testing.T, id core.QuestionID) {
				teamsDeny(t, tfake, m, tmUser, id, mk.Carried("a deny reason (Teams)"))
			}, core.StateAnswered},
		{"approval approved by email with a note", approval("email", "deploy", 0),
			func(t *testing.T, id core.QuestionID) {
				door.emailApprove(t, smtp, mail, id, mk.Carried("an approval's note (email)"))
			}, core.StateAnswered},
		{"approval approved by ntfy with a note", approval("ntfy", "deploy", 0),
			func(t *testing.T, id core.QuestionID) {
				door.ntfyApprove(t, nfake, topic, id, mk.Carried("an approval's note (ntfy)"))
			}, core.StateAnswered},
		{"quorum approval denied by one vote with words", approval("", "rotate_keys", 2),
			answer(ops2, client.AnswerRequest{ChosenOptionID: core.DenyOption, Answer: mk.Carried("a deny vote's words")}), core.StateAnswered},
		{"decision settled by two votes with words", decision, inTurn(
			answer(ops2, client.AnswerRequest{ChosenOptionID: "ddb", Answer: mk.Carried("a decision vote's words")}),
			answer(ops, client.AnswerRequest{ChosenOptionID: "ddb", Answer: mk.Carried("the deciding vote's words")}),
		), core.StateAnswered},
		{"batch with a call's deny reason, then withdrawn by an operator", batch, inTurn(
			answer(ops2, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: "call_b", OptionID: core.DenyOption, Reason: mk.Carried("a batch call's deny reason before a cancel")}}}),
			withdraw(ops, mk.Carried("an operator's cancel reason after progress")),
		), core.StateCancelled},
		{"batch with a call's edit and reason, then withdrawn by the agent", batch, inTurn(
			answer(ops2, client.AnswerRequest{Calls: []core.CallDecision{editA("before the agent's cancel")}}),
			withdraw(agent, "plans changed"), // the agent's own words
		), core.StateCancelled},
		{"form with one free-text item answered, then timed out", form, inTurn(
			answer(ops2, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "name", Text: mk.Carried("a form item's free text before a timeout")}}}),
			timeOut,
		), core.StateTimedOut},
		{"batch with a call's edit and reason, then timed out", batch, inTurn(
			answer(ops2, client.AnswerRequest{Calls: []core.CallDecision{editA("before a timeout")}}),
			timeOut,
		), core.StateTimedOut},
		{"approval quorum with one vote's words, then timed out", approval("", "rotate_keys", 2), inTurn(
			answer(ops2, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: mk.Carried("an approve vote's words before a timeout")}),
			timeOut,
		), core.StateTimedOut},
		{"decision quorum with one vote's words, then timed out", decision, inTurn(
			answer(ops, client.AnswerRequest{ChosenOptionID: "pg", Answer: mk.Carried("a decision vote's words before a timeout")}),
			timeOut,
		), core.StateTimedOut},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.ask
			req.RunID, req.ToolCallID = "run-1", "toolu_p"+string(rune('a'+i))
			reads.askClosed(t, ctx, mk, req, c.close, c.state)
		})
	}
	mk.CheckCarried(t, "the agent")
}

// teamsDeny clicks Deny on question id's card in the Teams channel as u,
// with reason in the card's reason input, as Teams sends it.
func teamsDeny(t *testing.T, fake *teamsfake.Server, m *app.Main, u teamsfake.User, id core.QuestionID, reason string) {
	t.Helper()
	var card teamsfake.Message
	if !fake.Wait(15*time.Second, func() bool {
		q, err := m.Service.Get(t.Context(), id)
		if err != nil {
			return false
		}
		for _, ref := range q.Messages {
			for _, msg := range fake.Messages() {
				if ref.Surface == core.SurfaceTeams && msg.ID == ref.ID && msg.Card != nil {
					card = msg
					return true
				}
			}
		}
		return false
	}) {
		t.Fatalf("the Teams card of %s was never posted", id)
	}
	var c struct {
		Body []struct {
			Type    string           `json:"type"`
			Actions []map[string]any `json:"actions"`
		} `json:"body"`
	}
	if err := json.Unmarshal(card.Card, &c); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.Body {
		for _, data := range e.Actions {
			d, _ := data["data"].(map[string]any)
			ref, _ := d[teams.DataRef].(string)
			if r, err := core.DecodeRef(ref); err != nil || r.Action != core.RefDeny {
				continue
			}
			if in, ok := d[teams.DataInput].(string); ok {
				d[in] = reason
			}
			status, body, err := fake.Deliver(fake.ExecuteActivity(u, card, teams.Verb, d), "")
			if err != nil || status != http.StatusOK {
				t.Fatalf("deny in Teams: %d %v %s", status, err, body)
			}
			return
		}
	}
	t.Fatalf("the Teams card has no Deny: %s", card.Card)
}

// oneWayDoors acts on the signed links the email and ntfy doors send,
// as their recipients would, on the program's own listener.
type oneWayDoors struct {
	t             *testing.T
	m             *app.Main
	linkBase, key string
}

// approveLink is, of links, the one that approves question id.
func (d oneWayDoors) approveLink(links []string, id core.QuestionID) string {
	refOf, err := adaptertest.LinkRefs([]byte(d.key))
	if err != nil {
		d.t.Fatal(err)
	}
	for _, l := range links {
		if r, err := core.DecodeRef(refOf(l)); err == nil && r.QuestionID == id && r.Action == core.RefApprove {
			return l
		}
	}
	return ""
}

// post confirms link with form and fails unless the page says it was
// recorded.
func (d oneWayDoors) post(t *testing.T, link string, form url.Values) {
	t.Helper()
	res, err := http.PostForm(d.m.URL+strings.TrimPrefix(link, d.linkBase), form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d", link, res.StatusCode)
	}
}

func (d oneWayDoors) emailApprove(t *testing.T, smtp *emailfake.Server, to string, id core.QuestionID, note string) {
	t.Helper()
	var link string
	if _, ok := smtp.Wait(to, 15*time.Second, func(ms []emailfake.Message) bool {
		for _, msg := range ms {
			if link = d.approveLink(msg.Links, id); link != "" {
				return true
			}
		}
		return false
	}); !ok {
		t.Fatalf("no email to %s with an approve link for %s", to, id)
	}
	d.post(t, link, url.Values{"address": {to}, "text": {note}})
}

func (d oneWayDoors) ntfyApprove(t *testing.T, fake *ntfyfake.Server, topic string, id core.QuestionID, note string) {
	t.Helper()
	var link string
	if _, ok := fake.Wait(topic, 15*time.Second, func(ms []ntfyfake.Message) bool {
		for _, msg := range ms {
			var links []string
			for _, a := range msg.Actions {
				links = append(links, a.URL)
			}
			if link = d.approveLink(links, id); link != "" {
				return true
			}
		}
		return false
	}); !ok {
		t.Fatalf("no ntfy message on %s with an approve action for %s", topic, id)
	}
	d.post(t, link, url.Values{"text": {note}})
}
