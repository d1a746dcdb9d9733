package console

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestConsoleScreenshots renders the inbox on a desktop and a phone, and a
// question's history, and keeps them under testdata with -update.
func TestConsoleScreenshots(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	ops := client.New(m.URL, apptest.OpTok)
	br := apptest.NewChrome(t)

	dec := ask(t, agent, client.AskRequest{Kind: core.KindDecision, Question: "Which message queue should the order service use?",
		Reversibility: core.HardToReverse, Context: "Peak load is 2k orders a minute; the team runs no Kafka today.",
		Labels: core.Labels{Project: "orders", Task: "queue"}, Options: []core.Option{
			{ID: "kafka", Title: "Kafka", Writeup: "Durable and replayable; one more system to run.", Recommended: true},
			{ID: "sqs", Title: "SQS", Writeup: "Managed and cheap; no replay, 256 KB messages."},
		}})
	appr := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Run the billing migration in production?",
		Reversibility: core.HardToReverse, Tool: "migrate", Labels: core.Labels{Project: "billing"},
		Arguments: []byte(`{"database":"billing","steps":["add_column invoices.tax_id","backfill"],"dry_run":false}`)})
	ask(t, agent, client.AskRequest{Kind: core.KindClarification, Question: "What should the new CLI flag be called?",
		Context: "It turns off colour in the output.", Labels: core.Labels{Project: "cli"}})
	form := ask(t, agent, client.AskRequest{Kind: core.KindForm, Question: "Set up the staging cluster", Labels: core.Labels{Project: "infra"},
		Items: []core.FormItem{
			{ID: "region", Question: "Which region?", Options: []core.FormOption{{ID: "eu", Label: "eu-west-1", Recommended: true}, {ID: "us", Label: "us-east-1"}}},
			{ID: "size", Question: "Node size?", Options: []core.FormOption{{ID: "s", Label: "small"}, {ID: "m", Label: "medium", Recommended: true}}},
		}})
	if _, err := ops.Answer(t.Context(), form.ID, client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "region", OptionID: "eu"}}}); err != nil {
		t.Fatal(err)
	}
	batch := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Apply the three config writes for the search cluster?",
		Labels: core.Labels{Project: "search"}, Calls: []core.CallInput{
			{ToolCallID: "toolu_1", Tool: "write_file", Arguments: []byte(`{"path":"/etc/search/shards.yaml"}`)},
			{ToolCallID: "toolu_2", Tool: "write_file", Arguments: []byte(`{"path":"/etc/search/replicas.yaml"}`)},
			{ToolCallID: "toolu_3", Tool: "chmod", Arguments: []byte(`{"path":"/etc/search","mode":"0750"}`)},
		}})
	if _, err := ops.Answer(t.Context(), batch.ID, client.AnswerRequest{Calls: []core.CallDecision{{ToolCallID: "toolu_1", OptionID: core.ApproveOption}}}); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Should the nightly export skip archived projects?", "Which Go version should the build image pin?"} {
		ask(t, client.New(m.URL, apptest.AgentB), client.AskRequest{Kind: core.KindClarification, Question: text})
	}

	// The inbox as a list; then its first row open, asking to confirm
	// its hard-to-reverse choice. to answer, and the same row
	// asking to confirm its hard-to-reverse choice.
	desk := br.Tab(t, 1280, 1000, false)
	signIn(t, desk, m.URL, m.AdminToken, "admin")
	waitCard(t, desk, batch.ID, "open")
	shot(t, desk, "inbox-desktop.png", 1280)
	openRow(t, desk, dec.ID)
	apptest.Do(t, desk, chromedp.SendKeys(chromedp.ID("note-"+dec.ID), "start small; revisit at 5k a minute"),
		chromedp.Click(chromedp.CSS(cardSel(dec.ID)+" button[value=sqs]")))
	apptest.Until(t, desk, `document.querySelector("`+cardSel(dec.ID)+` .confirm-step") !== null`)
	shot(t, desk, "inbox-confirm.png", 1280)

	phone := br.Tab(t, 390, 844, true)
	signIn(t, phone, m.URL, apptest.OpTok, "ops")
	shot(t, phone, "inbox-phone.png", 780)

	if _, err := ops.Answer(t.Context(), appr.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Answer: "the dry run was clean"}); err != nil {
		t.Fatal(err)
	}
	// A late second answer leaves a refused attempt in the history.
	if _, err := ops.Answer(t.Context(), appr.ID, client.AnswerRequest{ChosenOptionID: core.DenyOption}); err == nil {
		t.Fatal("a second answer was accepted")
	}
	tall := br.Tab(t, 1280, 1700, false)
	signIn(t, tall, m.URL, m.AdminToken, "admin")
	desk = tall
	apptest.GoTo(t, desk, m.URL+"/q/"+string(appr.ID))
	apptest.Until(t, desk, `document.querySelector(".history tbody tr") !== null && document.querySelector(".resume") !== null`)
	shot(t, desk, "history.png", 1280)

	// The history at phone width: each event a block of labelled values.
	apptest.GoTo(t, phone, m.URL+"/q/"+string(appr.ID))
	apptest.Until(t, phone, `document.querySelector(".history tbody tr") !== null`)
	apptest.Do(t, phone, chromedp.ScrollIntoView(".history"))
	shot(t, phone, "history-phone.png", 780)
}

// shot captures the page's viewport and checks it is a PNG of the given
// width; with -update it is kept under testdata.
func shot(t *testing.T, ctx context.Context, name string, width int) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if w := img.Bounds().Dx(); w != width {
		t.Fatalf("%s is %dpx wide, want %d", name, w, width)
	}
	path := filepath.Join(shotDir, name)
	if *apptest.UpdateShots {
		if err := os.MkdirAll(shotDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: run go test ./cmd/askbridge -run Screenshots -update", path)
	}
}
