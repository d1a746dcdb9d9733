package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/mcp"
)

// withoutHeader sends each request without one header.
type withoutHeader struct {
	name string
	next http.RoundTripper
}

func (d withoutHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Del(d.name)
	return d.next.RoundTrip(req)
}

// TestTaskListenRefusesAsTheOtherMethodsDo: the listen askbridge serves
// itself refuses what the SDK refuses of every other 2026-07-28 request,
// with HTTP 400 and the same codes: a revision it does not speak
// (-32022, naming the revisions it does), a request without its
// Mcp-Method header (-32020), and a host that did not declare the
// extension (-32021). Before, a listen of 2099-01-01 was acknowledged and
// served as a 2026-07-28 one, a listen without Mcp-Method was served too,
// and the missing capability came with HTTP 200.
func TestTaskListenRefusesAsTheOtherMethodsDo(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	own := alice.task(e.ctx, mcp.ToolClarification, map[string]any{"question": "Mine?", "reversibility": "reversible"}).TaskID

	future := e.host("tok-alice", tasksCaps(false))
	future.version = "2099-01-01"
	bare := e.host("tok-alice", tasksCaps(false))
	bare.http = &http.Client{Transport: withoutHeader{"Mcp-Method", bare.http.Transport}}
	plain := e.host("tok-alice", map[string]any{})
	for _, c := range []struct {
		name string
		host *taskClient
		code int
		data string // a part of the error's data
	}{
		{"a revision askbridge does not speak", future, -32022, `"2026-07-28"`},
		{"no Mcp-Method header", bare, -32020, ""},
		{"no Tasks extension declared", plain, -32021, `"io.modelcontextprotocol/tasks"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _, err := c.host.post(e.ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{own}}})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var m struct {
				Method string    `json:"method"`
				Error  *rpcError `json:"error"`
			}
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("HTTP %d, an event stream: the listen was served", res.StatusCode)
			}
			if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
				t.Fatal(err)
			}
			if m.Error == nil || m.Error.Code != c.code || !strings.Contains(string(m.Error.Data), c.data) {
				t.Errorf("refused with %+v (%s), want %d", m.Error, dataOf(m.Error), c.code)
			}
			if res.StatusCode != http.StatusBadRequest {
				t.Errorf("HTTP %d, want 400", res.StatusCode)
			}
		})
	}
}

// TestTaskListenRefusesAnIDNoRequestHas: a listen whose id is not a
// JSON-RPC request id (a string or an integer) is refused as the SDK
// refuses any other request with such an id (HTTP 400), with an Invalid
// Request error whose id is null, since the id sent cannot be echoed.
// Before, it was served: an object, a boolean, null or a fraction came
// back as the stream's subscription id and as the response's id, which
// the pinned schema's RequestId allows neither of, and a host could not
// tie them to its request. A string id is served.
func TestTaskListenRefusesAnIDNoRequestHas(t *testing.T) {
	e := newTaskEnv(t)
	alice := e.host("tok-alice", tasksCaps(false))
	own := alice.task(e.ctx, mcp.ToolClarification, map[string]any{"question": "Mine?", "reversibility": "reversible"}).TaskID
	for _, id := range []string{`{"a":1}`, `null`, `true`, `1.5`, `[1]`} {
		t.Run(id, func(t *testing.T) {
			h := e.host("tok-alice", tasksCaps(false))
			h.rawID = json.RawMessage(id)
			res, _, err := h.post(e.ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": []string{own}}})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("HTTP %d, an event stream: the listen was served", res.StatusCode)
			}
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error *rpcError       `json:"error"`
			}
			if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "null" {
				t.Errorf("HTTP %d, id %s, error %+v; want 400, null and -32600", res.StatusCode, m.ID, m.Error)
			}
		})
	}
	h := e.host("tok-alice", tasksCaps(false))
	h.rawID = json.RawMessage(`"listen-1"`)
	lctx, stop := context.WithCancel(e.ctx)
	defer stop() // the task stays open: the stream would too
	stream, err := h.listen(lctx, own)
	if err != nil {
		t.Fatal(err)
	}
	var ack struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(<-stream, &ack); err != nil || ack.Method != "notifications/subscriptions/acknowledged" ||
		ack.Params.Meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
		t.Fatalf("a listen with a string id: %+v, %v", ack, err)
	}
}
