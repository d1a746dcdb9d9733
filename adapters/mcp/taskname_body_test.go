package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/mcp"
	"github.com/askbridge/askbridge/core"
)

// TestTaskNameIsCheckedAgainstTheBodyAsTheSDKReadsIt: the Mcp-Name check
// reads the method and the task's id as the SDK that serves the request
// reads them (keys matched exactly, escapes decoded), so no spelling of
// the body gets a task method past the check. Before, it read them with
// encoding/json, which matches a key whatever its case, and skipped any
// body without the bytes "tasks": a second "taskid" key, a "Method" key
// naming another method, or an escaped method name had the check pass on
// the decoy the header names while the SDK cancelled the task the body
// names.
func TestTaskNameIsCheckedAgainstTheBodyAsTheSDKReadsIt(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	ask := func(text string) string {
		return alice.task(e.ctx, mcp.ToolClarification, map[string]any{"question": text, "reversibility": "reversible"}).TaskID
	}
	target, decoy := ask("Target?"), ask("Decoy?")
	// The _meta of every 2026-07-28 request, its "tasks" escaped too.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"task-host","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/\u0074asks":{}}}}`
	for _, c := range []struct{ name, body string }{
		{"a second key in another case", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{` + meta + `,"taskId":"` + target + `","taskid":"` + decoy + `"}}`},
		{"a method key in another case", `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","Method":"ping","params":{` + meta + `,"taskId":"` + target + `"}}`},
		{"an escaped method", `{"jsonrpc":"2.0","id":3,"method":"\u0074asks/cancel","params":{` + meta + `,"taskId":"` + target + `"}}`},
	} {
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, alice.url, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tasks/cancel")
		req.Header.Set("Mcp-Name", decoy)
		res, err := alice.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var m struct{ Error *rpcError }
		if res.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &m) != nil || m.Error == nil || m.Error.Code != -32020 {
			t.Errorf("%s: a tasks/cancel of %s under Mcp-Name %s: HTTP %d %s, want 400 and -32020", c.name, target, decoy, res.StatusCode, body)
		}
	}
	for _, id := range []string{target, decoy} {
		if q, err := e.svc.Get(e.ctx, core.QuestionID(id)); err != nil || !q.Open() {
			t.Errorf("question %s after the refused requests: %+v, %v", id, q, err)
		}
	}
}
