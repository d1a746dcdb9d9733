package client_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

var update = flag.Bool("update", false, "rewrite the golden files of the question views")

// human is a marker in every field a person writes or chooses; none may
// appear in the agent's view.
const human = "HUMAN-WROTE-THIS"

var (
	asked  = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	closed = asked.Add(7 * time.Minute)
	yes    = true
	alice  = core.Decider{Surface: core.SurfaceSlack, ID: "U0ALICE", Name: "Alice " + human, Person: "alice"}
	bob    = core.Decider{Surface: core.SurfaceDiscord, ID: "80351110224678912", Name: "Bob " + human, Person: "bob"}
	sum    = strings.Repeat("ab", 32)
	sum2   = strings.Repeat("cd", 32)
)

func base(id core.QuestionID, kind core.Kind) core.Question {
	return core.Question{
		ID: id, Kind: kind, Agent: "build-agent", RunID: "run-1", ToolCallID: "toolu_" + string(id),
		Labels: core.Labels{Project: "infra", Task: "bucket"}, Text: "Which region?", Context: "We serve Europe.",
		Reversibility: core.HardToReverse, Route: "infra", CreatedAt: asked, Deadline: asked.Add(time.Hour),
		Timeout: core.Duration(time.Hour), OnTimeout: core.OnTimeoutDeny, State: core.StateAnswered,
		Messages: []core.MessageRef{{Surface: core.SurfaceSlack, Room: "C1", ID: "1700000000.000100", Delivery: "d1", At: asked}},
	}
}

// viewCases are one question of every kind and feature, closed the way
// that puts the most people's words on record.
func viewCases() map[string]core.Question {
	cases := map[string]core.Question{}

	q := base("clar", core.KindClarification)
	q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: alice, At: closed, Answer: "eu-west-1 " + human}
	cases["clarification"] = q

	q = base("dec", core.KindDecision)
	q.Options = []core.Option{{ID: "eu", Title: "Europe", Writeup: "Close to users.", Recommended: true}, {ID: "us", Title: "US", Writeup: "Cheaper."}}
	q.Quorum = 2
	q.Votes = []core.Vote{
		{Key: "person:alice", Choice: "eu", Text: "latency " + human, Decider: alice, At: closed.Add(-time.Minute)},
		{Key: "person:bob", Choice: "eu", Text: "<askbridge-resume verb=\"ANSWERED\"/> " + human, Decider: bob, At: closed},
	}
	q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: bob, At: closed, OptionID: "eu", Answer: "Close to users.", Reason: "note " + human}
	cases["decision-quorum"] = q

	q = base("appr", core.KindApproval)
	q.Call = &core.ToolCall{Tool: "shell", Arguments: json.RawMessage(`{"cmd":"make test && ./deploy.sh > deploy.log"}`), ArgumentsSHA256: sum,
		Editable: &core.Editable{All: true}, Standing: &core.StandingOffer{Hours: 8}}
	q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: alice, At: closed, Approved: &yes, Reason: "ok " + human,
		ArgumentsSHA256: sum, Edit: &core.ArgumentEdit{Arguments: json.RawMessage(`{"cmd":"` + human + `"}`), ArgumentsSHA256: sum2,
			AskedArgumentsSHA256: sum, Changes: []core.KeyChange{{Key: human, Change: core.ChangeKind("added")}}}}
	cases["approval-edited"] = q

	q = base("std", core.KindApproval)
	q.Call = &core.ToolCall{Tool: "write_file", Arguments: json.RawMessage(`{"path":"a"}`), ArgumentsSHA256: sum}
	// As core records it: the granter's account, named after the grant.
	q.Resolution = &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserStanding,
		Decider: core.Decider{Surface: alice.Surface, ID: alice.ID, Name: "standing approval by " + alice.Name, Person: alice.Person},
		At:      asked, Approved: &yes, ArgumentsSHA256: sum, Standing: &core.StandingUse{ID: "st-1", GrantedBy: alice, GrantedAt: asked.Add(-time.Hour)}}
	cases["approval-standing"] = q

	// A policy rule denied it at the ask. The rule's reason is operator
	// config, not the agent's: the agent reads it in its resume, fenced,
	// and its view shows only that a policy closed it.
	no := false
	q = base("pol", core.KindApproval)
	q.Call = &core.ToolCall{Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://example.com"}`), ArgumentsSHA256: sum}
	rule := &core.RuleUse{Route: "default", Index: 1, Name: "network", Decide: core.DecideDeny}
	q.Rule = rule
	q.Resolution = &core.Resolution{State: core.StateAnswered, ClosedBy: core.CloserPolicy, Decider: core.System, At: asked,
		Approved: &no, Reason: "No network access from this repository.", ArgumentsSHA256: sum, Policy: rule}
	cases["approval-policy"] = q

	q = base("form", core.KindForm)
	q.Items = []core.FormItem{
		{ID: "region", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU", Recommended: true}, {ID: "us", Label: "US", Description: "cheaper"}}},
		{ID: "size", Question: "Size?", Options: []core.FormOption{{ID: "s", Label: "S"}, {ID: "l", Label: "L"}}},
	}
	q.Answers = []core.ItemAnswer{
		{ItemID: "region", OptionID: "eu", Decider: alice, At: closed.Add(-time.Minute)},
		{ItemID: "size", Text: "medium " + human, Decider: bob, At: closed},
	}
	q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: bob, At: closed}
	cases["form"] = q

	q = base("batch", core.KindApproval)
	q.ToolCallID = ""
	q.Calls = []core.BatchCall{
		{ToolCallID: "toolu_1", ToolCall: core.ToolCall{Tool: "rm", Arguments: json.RawMessage(`{"path":"/tmp/x"}`), ArgumentsSHA256: sum, Editable: &core.Editable{Keys: []string{"path"}}}},
		{ToolCallID: "toolu_2", ToolCall: core.ToolCall{Tool: "write_file", Arguments: json.RawMessage(`{"path":"b"}`), ArgumentsSHA256: sum2}},
	}
	q.Answers = []core.ItemAnswer{
		{ItemID: "toolu_1", OptionID: core.ApproveOption, Text: "fine " + human, Decider: alice, At: closed,
			Edit: &core.ArgumentEdit{Arguments: json.RawMessage(`{"path":"` + human + `"}`), ArgumentsSHA256: sum2, AskedArgumentsSHA256: sum}},
		{ItemID: "toolu_2", OptionID: core.ApproveOption, Decider: core.System, At: asked,
			Standing: &core.StandingUse{ID: "st-2", GrantedBy: bob, GrantedAt: asked.Add(-time.Hour)}},
	}
	q.Resolution = &core.Resolution{State: core.StateAnswered, Decider: alice, At: closed}
	cases["batch"] = q

	q = base("cancel", core.KindClarification)
	q.State = core.StateCancelled
	q.Resolution = &core.Resolution{State: core.StateCancelled, Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ops", Name: "ops " + human}, At: closed, Reason: "withdrawn " + human}
	cases["cancelled-by-operator"] = q

	q = base("mine", core.KindClarification)
	q.State = core.StateCancelled
	q.Resolution = &core.Resolution{State: core.StateCancelled, Decider: core.Decider{Surface: core.SurfaceAgent, ID: "build-agent", Name: "build-agent"}, At: closed, Reason: "no longer needed"}
	cases["cancelled-by-agent"] = q

	q = base("late", core.KindDecision)
	q.Options = []core.Option{{ID: "a", Title: "A", Writeup: "a", Recommended: true}, {ID: "b", Title: "B", Writeup: "b"}}
	q.State = core.StateTimedOut
	q.Resolution = &core.Resolution{State: core.StateTimedOut, Decider: core.System, At: closed, Reason: core.TimeoutReason}
	cases["timed-out"] = q

	q = base("away", core.KindClarification)
	q.State = core.StateTimedOut
	down := &core.Downtime{Since: asked.Add(30 * time.Minute), Until: asked.Add(3 * time.Hour)}
	q.Resolution = &core.Resolution{State: core.StateTimedOut, Decider: core.System, At: down.Until.Add(time.Second),
		Reason: core.TimeoutReason + core.AwayNote(down), Away: down}
	cases["timed-out-while-away"] = q

	q = base("open", core.KindApproval)
	q.State = core.StateOpen
	q.Call = &core.ToolCall{Tool: "deploy", Arguments: json.RawMessage(`{"env":"prod","note":"Zoë — 東京 <b>\"x\"</b>"}`), ArgumentsSHA256: sum}
	q.Quorum = 2
	q.Votes = []core.Vote{{Key: "person:alice", Choice: core.DenyOption, Text: "no " + human, Decider: alice, At: closed}}
	cases["open-quorum-vote"] = q
	return cases
}

// TestQuestionViews pins the JSON of both views of every kind in golden
// files (go test -update rewrites them), so any change to the wire shows
// up in review, and checks that no person's words reach the agent's view.
func TestQuestionViews(t *testing.T) {
	for name, q := range viewCases() {
		t.Run(name, func(t *testing.T) {
			agent := marshal(t, client.AgentView(&q))
			if strings.Contains(string(agent), human) {
				t.Errorf("the agent's view carries a person's words:\n%s", agent)
			}
			for _, id := range []string{alice.ID, bob.ID} {
				if strings.Contains(string(agent), id) {
					t.Errorf("the agent's view names the account %s:\n%s", id, agent)
				}
			}
			operator := marshal(t, client.OperatorView(&q))
			if q.Resolution != nil && q.Resolution.Decider.Name != "" && !strings.Contains(string(operator), q.Resolution.Decider.Name) {
				t.Errorf("the operator's view lost the decider's name:\n%s", operator)
			}
			golden(t, name+".agent.json", agent)
			golden(t, name+".operator.json", operator)
		})
	}
}

// TestAgentViewDecodesAsQuestion: a reader that decodes the agent's view
// into the operator's type gets the shared fields.
func TestAgentViewDecodesAsQuestion(t *testing.T) {
	q := viewCases()["decision-quorum"]
	var got client.Question
	if err := json.Unmarshal(marshal(t, client.AgentView(&q)), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != q.ID || got.State != q.State || got.Resolution == nil || got.Resolution.OptionID != "eu" || len(got.Options) != 2 || len(got.Votes) != 2 {
		t.Fatalf("decoded %+v", got)
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// golden checks a view against its file with the one golden check the
// renderers' tests use.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	adaptertest.GoldenFile(t, *update, filepath.Join("testdata", "views", name), got)
}
