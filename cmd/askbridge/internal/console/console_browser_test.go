package console

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

const shotDir = "../../../../adapters/console/testdata/screenshots"

// signIn signs a tab in with a token and waits for the inbox, live.
func signIn(t *testing.T, ctx context.Context, base, token, name string) {
	t.Helper()
	apptest.GoTo(t, ctx, base+"/")
	apptest.Do(t, ctx, chromedp.SendKeys(chromedp.ID("token"), token))
	if status := browsertest.Submit(t, ctx, "#signin button"); status != http.StatusOK {
		t.Fatalf("sign in as %s: %d", name, status)
	}
	apptest.Until(t, ctx, fmt.Sprintf(`document.querySelector(".top .who") !== null && document.querySelector(".top .who").textContent.includes(%q)`, name))
	waitLive(t, ctx)
}

func waitLive(t *testing.T, ctx context.Context) {
	t.Helper()
	apptest.Until(t, ctx, `document.body.getAttribute("data-live") === "yes"`)
}

func cardSel(id core.QuestionID) string { return "#card-" + string(id) }

func waitCard(t *testing.T, ctx context.Context, id core.QuestionID, state string) {
	t.Helper()
	apptest.Until(t, ctx, fmt.Sprintf(`(function(){ var c = document.querySelector(%q); return c !== null && c.getAttribute("data-state") === %q; })()`, cardSel(id), state))
}

func ask(t *testing.T, c *client.Client, req client.AskRequest) *client.AgentQuestion {
	t.Helper()
	if req.RunID == "" {
		req.RunID = "run-browser"
	}
	if req.Reversibility == "" {
		req.Reversibility = core.Reversible
	}
	q, err := c.Ask(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func getQ(t *testing.T, c *client.Client, id core.QuestionID) *client.Question {
	t.Helper()
	q, err := c.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestConsoleAtPhoneWidthWithLongWords: words with no place to break (a
// URL in a write-up, a path as a form option, a digest, a long question)
// wrap inside a 390px screen rather than widen the page, on every page.
func TestConsoleAtPhoneWidthWithLongWords(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	word := func(prefix string) string { return prefix + strings.Repeat("abcdefghij", 11) }
	url := "https://storage.example.com/" + word("buckets") + "/" + word("objects")
	path := "/srv/" + word("data")
	clar := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: word("Which") + "?", Context: "See " + url,
		Labels: core.Labels{Project: word("project"), Task: word("task")}})
	dec := ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Where should " + path + " go?", Options: []core.Option{
		{ID: "bucket", Title: word("Bucket"), Writeup: "Copy it to " + url + " as the runbook says.", Recommended: true},
		{ID: "disk", Title: "Disk", Writeup: "Keep it at " + path},
	}})
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set-up of " + url, Items: []core.FormItem{
		{ID: "dir", Question: "Which directory, " + path + " or the other?", Options: []core.FormOption{
			{ID: "long", Label: path, Description: url, Recommended: true}, {ID: "short", Label: "/srv"}}},
	}})
	appr := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Write " + path + "?", Tool: word("write_file"),
		Arguments: []byte(`{"path":"` + path + `","source":"` + url + `"}`)})
	// A standing approval for the long tool name fills /standing's table.
	if _, err := ops.Answer(t.Context(), appr.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: "see " + url,
		Standing: &core.StandingRequest{Scope: core.StandingRun, SameArguments: true}}); err != nil {
		t.Fatal(err)
	}

	phone := br.Tab(t, 390, 844, true)
	signIn(t, phone, m.URL, apptest.OpTok, "ops")
	for _, id := range []core.QuestionID{clar.ID, dec.ID, form.ID} {
		waitCard(t, phone, id, "open")
		openRow(t, phone, id)
	}
	fitsWidth(t, phone, "the inbox", 390)

	// The same cards as an observer sees them: options listed, not buttons.
	watcher := br.Tab(t, 390, 844, true)
	signIn(t, watcher, m.URL, apptest.ObsTok, "dash")
	waitCard(t, watcher, dec.ID, "open")
	openRow(t, watcher, dec.ID)
	fitsWidth(t, watcher, "the observer's inbox", 390)

	apptest.GoTo(t, phone, m.URL+"/q/"+string(appr.ID))
	apptest.Until(t, phone, `document.querySelector(".history tbody tr") !== null && document.querySelector(".resume") !== null`)
	fitsWidth(t, phone, "a question's history", 390)

	apptest.GoTo(t, phone, m.URL+"/standing")
	apptest.Until(t, phone, `document.querySelector(".standing-row") !== null`)
	fitsWidth(t, phone, "/standing", 390)
}

// TestConsolePassesAxe runs axe-core over the sign-in page, an inbox with
// cards of every kind (open, closed, recommended options, a hard-to-reverse
// marker), a question's history and /standing.
func TestConsolePassesAxe(t *testing.T) {
	browsertest.LoadAxe(t)
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	// Its standing approval would approve later asks for its tool at once,
	// so no card below asks for that tool.
	granted := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Rotate the logs?", Tool: "rotate_logs",
		Arguments: []byte(`{"keep":7}`)})
	if _, err := ops.Answer(t.Context(), granted.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: "fine",
		Standing: &core.StandingRequest{Scope: core.StandingRun}}); err != nil {
		t.Fatal(err)
	}
	open := []*client.AgentQuestion{
		ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Which queue?", Reversibility: core.HardToReverse,
			Context: "Peak load is 2k orders a minute.", Labels: core.Labels{Project: "orders"}, Options: []core.Option{
				{ID: "kafka", Title: "Kafka", Writeup: "Durable and replayable.", Recommended: true},
				{ID: "sqs", Title: "SQS", Writeup: "Managed; no replay."},
			}}),
		ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Run the migration?", Reversibility: core.HardToReverse,
			Tool: "migrate", Arguments: []byte(`{"db":"billing"}`)}),
		ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Edit the config?", Tool: "write_file",
			Arguments: []byte(`{"path":"/etc/app.conf","content":"x"}`), Editable: &core.Editable{Keys: []string{"content"}}}),
		ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply two writes?", Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
			{ToolCallID: "toolu_2", Tool: "chmod", Arguments: []byte(`{"path":"/b"}`)},
		}}),
		ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up staging", Items: []core.FormItem{
			{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1", Description: "closest", Recommended: true}, {ID: "us", Label: "us-east-1"}}},
			{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium"}}},
		}}),
	}
	closing := ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "What should the flag be called?"})
	open = append(open, closing)
	if _, err := ops.Answer(t.Context(), open[4].ID, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "region", OptionID: "eu"}}}); err != nil {
		t.Fatal(err)
	}

	tab := br.Tab(t, 1280, 900, false)
	apptest.GoTo(t, tab, m.URL+"/")
	apptest.Until(t, tab, `document.getElementById("signin") !== null`)
	audit(t, tab, "the sign-in page")

	signIn(t, tab, m.URL, m.AdminToken, "admin")
	for _, q := range open {
		waitCard(t, tab, q.ID, "open")
	}
	// A card that closes while the page is open, as the page redraws it.
	if _, err := ops.Answer(t.Context(), closing.ID, client.AnswerRequest{Answer: "--no-color"}); err != nil {
		t.Fatal(err)
	}
	waitCard(t, tab, closing.ID, "answered")
	audit(t, tab, "the inbox")
	for _, q := range open {
		openRow(t, tab, q.ID)
	}
	audit(t, tab, "the inbox with every row open")
	// A hard-to-reverse choice waiting for its confirmation, in its row.
	apptest.Do(t, tab, chromedp.Click(chromedp.CSS(cardSel(open[0].ID)+" button[value=sqs]")))
	apptest.Until(t, tab, `document.querySelector("`+cardSel(open[0].ID)+` .confirm-step") !== null`)
	audit(t, tab, "the inbox confirming a choice")

	apptest.GoTo(t, tab, m.URL+"/q/"+string(granted.ID))
	apptest.Until(t, tab, `document.querySelector(".history tbody tr") !== null && document.querySelector(".resume") !== null`)
	waitLive(t, tab)
	audit(t, tab, "a question's history")

	apptest.GoTo(t, tab, m.URL+"/standing")
	apptest.Until(t, tab, `document.querySelector(".standing-row") !== null`)
	audit(t, tab, "/standing")
}

// TestConsoleKeepsDrafts: when someone else acts on a question, the card
// open in another page is drawn again, and what its reader had typed but
// not sent, the fold they opened and their caret stay as they were.
func TestConsoleKeepsDrafts(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)
	operator := br.Tab(t, 1280, 900, false)
	signIn(t, operator, m.URL, apptest.OpTok, "ops")

	q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply two writes?", Calls: []core.CallInput{
		{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/a"}`)},
		{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/b"}`), Editable: &core.Editable{All: true}},
	}})
	apptest.GoTo(t, operator, m.URL+"/q/"+string(q.ID))
	waitLive(t, operator)
	waitCard(t, operator, q.ID, "open")
	reason, editor := "#reason-"+string(q.ID)+"-toolu_2", "#args-"+string(q.ID)+"-toolu_2"
	apptest.Do(t, operator, chromedp.Click(chromedp.CSS(cardSel(q.ID)+" form.call-form[data-call=toolu_2] ~ details.edit summary")),
		chromedp.Clear(chromedp.CSS(editor)), chromedp.SendKeys(chromedp.CSS(editor), `{"path":"/b2"}`),
		chromedp.SendKeys(chromedp.CSS(reason), "checked with the owner"))
	// Someone else decides the other call: the operator's card changes.
	if _, err := ops.Answer(t.Context(), q.ID, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: "toolu_1", OptionID: core.ApproveOption}}}); err != nil {
		t.Fatal(err)
	}
	apptest.Until(t, operator, `document.querySelector("`+cardSel(q.ID)+` li[data-call=toolu_1].decided") !== null`)
	if v := apptest.Eval[string](t, operator, `document.querySelector("`+reason+`").value`); v != "checked with the owner" {
		t.Errorf("the half-typed reason became %q", v)
	}
	if v := apptest.Eval[string](t, operator, `document.querySelector("`+editor+`").value`); v != `{"path":"/b2"}` {
		t.Errorf("the edited arguments became %q", v)
	}
	if !apptest.Eval[bool](t, operator, `document.querySelector("`+editor+`").closest("details").open`) {
		t.Error("the opened editor folded shut")
	}
	if id := apptest.Eval[string](t, operator, `document.activeElement ? document.activeElement.id : ""`); id != strings.TrimPrefix(reason, "#") {
		t.Errorf("the caret moved to %q", id)
	}
	// The draft is still the reader's to send.
	if status := browsertest.Submit(t, operator, cardSel(q.ID)+" form.call-form[data-call=toolu_2] button.approve"); status != http.StatusOK {
		t.Fatalf("approve the second call: %d", status)
	}
	got := getQ(t, ops, q.ID)
	if got.State != core.StateAnswered {
		t.Fatalf("after both calls: %s", got.State)
	}
	for _, co := range core.CallOutcomes(&core.Question{Calls: got.Calls, Answers: got.Answers}) {
		if co.Call.ToolCallID == "toolu_2" && (co.Decision == nil || co.Decision.Text != "checked with the owner") {
			t.Errorf("the second call's decision: %+v", co.Decision)
		}
	}
}
