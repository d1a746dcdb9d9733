package app_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestMetricsOneLateAttemptCountsOnce: one late attempt through the API,
// on each kind of question, is one 409, one refused event and one
// refusal and one lost pass on /metrics, however often the chokepoint
// may try the store for some answers.
func TestMetricsOneLateAttemptCountsOnce(t *testing.T) {
	s := app.Settings{}
	anyone := map[string][]string{"api": {"*"}}
	s.File.Routes = map[string]app.RouteFile{core.DefaultRoute: {Deciders: anyone}, "two": {Deciders: anyone, Quorum: 2}}
	m := apptest.Start(t, s)
	ctx := t.Context()
	agent, ops, admin := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok), client.New(m.URL, m.AdminToken)
	approval := client.AskRequest{Kind: core.KindApproval, Question: "Deploy?", Reversibility: core.HardToReverse,
		RunID: "run-late", Tool: "deploy", Arguments: json.RawMessage(`{"cmd":"make test && ./deploy.sh > deploy.log"}`)}
	form := client.AskRequest{Kind: core.KindForm, Question: "Plan?", Reversibility: core.Reversible, RunID: "run-late",
		Items: []core.FormItem{{ID: "day", Question: "Which day?", Options: []core.FormOption{{ID: "mon", Label: "Monday"}, {ID: "fri", Label: "Friday"}}}}}
	batch := client.AskRequest{Kind: core.KindApproval, Question: "Write these?", Reversibility: core.Reversible, RunID: "run-late",
		Calls: []core.CallInput{
			{ToolCallID: "w1", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/a"}`)},
			{ToolCallID: "w2", Tool: "write_file", Arguments: json.RawMessage(`{"path":"/b"}`)},
		}}
	quorum := approval
	quorum.Route, quorum.ToolCallID = "two", "vote"
	approve := client.AnswerRequest{ChosenOptionID: core.ApproveOption}
	deny := client.AnswerRequest{ChosenOptionID: core.DenyOption}
	tests := []struct {
		name  string
		ask   client.AskRequest
		close []client.AnswerRequest // by ops, then by admin
		late  client.AnswerRequest   // by admin, or by ops once both voted
	}{
		{"approve", withCall(approval, "a1"), []client.AnswerRequest{deny}, approve},
		{"deny", withCall(approval, "a2"), []client.AnswerRequest{approve}, deny},
		{"clarification", clarify("Which region?"), []client.AnswerRequest{{Answer: "eu-west-1"}}, client.AnswerRequest{Answer: "us-east-1"}},
		{"form", form, []client.AnswerRequest{{Items: []client.ItemAnswer{{ItemID: "day", OptionID: "mon"}}}},
			client.AnswerRequest{Items: []client.ItemAnswer{{ItemID: "day", OptionID: "fri"}}}},
		{"batch approve all", batch, []client.AnswerRequest{deny}, approve},
		{"quorum vote", quorum, []client.AnswerRequest{approve, approve}, approve},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := agent.Ask(ctx, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			voters := []*client.Client{ops, admin}
			for i, a := range tt.close {
				if _, err := voters[i].Answer(ctx, q.ID, a); err != nil {
					t.Fatalf("closing: %v", err)
				}
			}
			if got, err := ops.Get(ctx, q.ID); err != nil || got.State == core.StateOpen {
				t.Fatalf("after closing: %+v, %v", got, err)
			}
			before := apptest.Scrape(t, m.URL, apptest.OpTok)
			late := admin
			if len(tt.close) > 1 {
				late = ops // both voted: one of them comes back, as anyone late would
			}
			_, err = late.Answer(ctx, q.ID, tt.late)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != http.StatusConflict {
				t.Fatalf("the late answer: %v, want 409", err)
			}
			after := apptest.Scrape(t, m.URL, apptest.OpTok)
			for _, c := range []struct {
				metric string
				labels []string
			}{
				{"askbridge_refusals_total", []string{"door", "answer", "reason", core.RefusedClosed}},
				{"askbridge_refusals_total", nil},
				{"askbridge_resolve_duration_seconds", []string{"result", core.ResolveLost}},
				{"askbridge_resolve_duration_seconds", nil},
			} {
				if d := apptest.Value(after, c.metric, c.labels...) - apptest.Value(before, c.metric, c.labels...); d != 1 {
					t.Errorf("%s%v rose by %v, want 1", c.metric, c.labels, d)
				}
			}
			evs, err := ops.Events(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, e := range evs {
				if e.QuestionID == q.ID && e.Kind == core.EventRefused {
					refused++
				}
			}
			if refused != 1 {
				t.Errorf("%d refused events, want 1", refused)
			}
		})
	}
}

func withCall(in client.AskRequest, call string) client.AskRequest {
	in.ToolCallID = call
	return in
}
