package mcp_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/mcp"
)

// fromOrigin sends a request to addr with the token and an Origin header
// (none when origin is "").
type fromOrigin struct{ addr, origin string }

func (o fromOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = o.addr, ""
	req.Header.Set("Authorization", "Bearer tok-alice")
	if o.origin != "" {
		req.Header.Set("Origin", o.origin)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestCrossOriginRefused: the streamable HTTP transport has servers
// validate the Origin header of every request and answer an invalid one
// with 403, so that a page in a browser cannot drive the MCP endpoint. A
// request from a page of another origin is refused before anything is
// served, whatever it is (a 2026-07-28 call, a session's initialize, a
// task listen), with a JSON-RPC error that has no id; one from the
// endpoint's own origin, or one with no Origin (every client that is not
// a browser), is served.
func TestCrossOriginRefused(t *testing.T) {
	e := newTaskEnv(t)
	addr := e.r.urls[0].Host
	host := func(origin string) *taskClient {
		c := e.host("tok-alice", tasksCaps(false))
		c.http = &http.Client{Transport: fromOrigin{addr, origin}}
		c.raw = nil
		return c
	}
	call := map[string]any{"name": mcp.ToolClarification, "arguments": map[string]any{"question": "From a page?", "reversibility": "reversible"}}
	initialize := func(c *taskClient) *http.Response {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "page", "version": "1"}}})
		req, _ := http.NewRequestWithContext(e.ctx, http.MethodPost, c.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, origin := range []string{"https://evil.example", "http://evil.example:" + strings.Split(addr, ":")[1], "null"} {
		c := host(origin)
		for what, send := range map[string]func() (*http.Response, error){
			"tools/call": func() (*http.Response, error) {
				res, _, err := c.post(e.ctx, "tools/call", mcp.ToolClarification, call)
				return res, err
			},
			"subscriptions/listen": func() (*http.Response, error) {
				res, _, err := c.post(e.ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}})
				return res, err
			},
			"initialize": func() (*http.Response, error) { return initialize(c), nil },
		} {
			res, err := send()
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				ID    json.RawMessage `json:"id"`
				Error *rpcError       `json:"error"`
			}
			derr := json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden || derr != nil || body.Error == nil || body.ID != nil {
				t.Errorf("%s from Origin %s: HTTP %d, %+v (%v); want 403 with a JSON-RPC error without an id", what, origin, res.StatusCode, body, derr)
			}
		}
	}
	if qs, _, _ := e.svc.ListOpen(e.ctx, "", 10); len(qs) != 0 {
		t.Errorf("a cross-origin call parked %d questions", len(qs))
	}

	for _, origin := range []string{"", "http://" + addr} {
		c := host(origin)
		raw, err := c.callTool(e.ctx, mcp.ToolClarification, call["arguments"].(map[string]any))
		if err != nil {
			t.Fatalf("a call with Origin %q: %v", origin, err)
		}
		asTask(t, raw)
		if res := initialize(c); res.StatusCode != http.StatusOK {
			t.Errorf("an initialize with Origin %q: HTTP %d", origin, res.StatusCode)
		} else {
			res.Body.Close()
		}
	}
}
