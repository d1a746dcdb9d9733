package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
)

// TestFencedEditedApprovalReadsItsApprovedHash: an approval an approver
// approved with edited arguments reads, wherever its agent reads it (the
// resume's data, the wait's and the read's question.resolution, MCP's
// get_answer), as approved for the hash of the edited arguments, never
// the asked ones'. Before, question.resolution said approved with the
// asked hash while the resume said the edited one, so a program checking
// "approved and the hash is mine" would run arguments the approver
// changed.
func TestFencedEditedApprovalReadsItsApprovedHash(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	m := apptest.Start(t, app.Settings{})
	agent, ops := client.New(m.URL, apptest.AgentA), client.New(m.URL, apptest.OpTok)
	q, err := agent.Ask(ctx, client.AskRequest{Kind: core.KindApproval, Question: "Move it?", Reversibility: core.Reversible,
		RunID: "run-1", ToolCallID: "toolu_01", Tool: "mv", Arguments: json.RawMessage(`{"to":"x"}`), Editable: &core.Editable{Keys: []string{"to"}}})
	if err != nil {
		t.Fatal(err)
	}
	edited := json.RawMessage(`{"to":"y"}`)
	if _, err := ops.Answer(ctx, q.ID, client.AnswerRequest{ChosenOptionID: core.ApproveOption, Arguments: edited}); err != nil {
		t.Fatal(err)
	}
	approved, _, err := core.HashArguments(edited)
	if err != nil {
		t.Fatal(err)
	}
	asked := q.Call.ArgumentsSHA256

	reads := map[string]string{}
	w, err := agent.Wait(ctx, q.ID)
	if err != nil || w.Resume == nil || w.Question == nil || w.Question.Resolution == nil {
		t.Fatalf("wait: %+v, %v", w, err)
	}
	reads["the resume's data"] = w.Resume.Structured.ArgumentsSHA256
	reads["the wait's question.resolution"] = w.Question.Resolution.ArgumentsSHA256
	// The read is the agent's view of the question; the wait holds it
	// under "question".
	type view struct {
		Resolution struct {
			Hash string `json:"arguments_sha256"`
		} `json:"resolution"`
	}
	var read view
	var wait struct {
		Question view `json:"question"`
	}
	for path, into := range map[string]any{"/v1/questions/" + string(q.ID): &read, "/v1/questions/" + string(q.ID) + "/wait?timeout=0s": &wait} {
		status, body := agentReads{m: m}.raw(t, http.MethodGet, path)
		if err := json.Unmarshal(body, into); status != http.StatusOK || err != nil {
			t.Fatalf("GET %s: %d %s (%v)", path, status, body, err)
		}
	}
	reads["GET the question"], reads["GET its wait"] = read.Resolution.Hash, wait.Question.Resolution.Hash
	hs, err := mcpSession(ctx, m.URL, apptest.AgentA)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	res, err := hs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "get_answer", Arguments: map[string]any{"question_id": q.ID}})
	if err != nil || res.IsError {
		t.Fatalf("get_answer: %+v, %v", res, err)
	}
	var st struct {
		Hash string `json:"arguments_sha256"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	reads["MCP get_answer"] = st.Hash

	for where, h := range reads {
		switch h {
		case approved:
		case asked:
			t.Errorf("%s: approved for the asked arguments' hash %s, not the edited ones' %s", where, asked, approved)
		default:
			t.Errorf("%s: hash %q, want the edited arguments' %s", where, h, approved)
		}
	}
}
