package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The Go SDK has no client for the Tasks extension, so the tests speak it
// themselves, from the specification (testdata/SOURCES names the
// revision): each request is one stateless 2026-07-28 POST carrying its
// version, client info and capabilities in _meta and the routing headers
// the transport names (Mcp-Method, and Mcp-Name with the tool's name or
// the task's id).

// rpcError is a JSON-RPC error as it comes over the wire.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// wireTask is the extension's DetailedTask, with its result type.
type wireTask struct {
	ResultType     string                      `json:"resultType"`
	TaskID         string                      `json:"taskId"`
	Status         string                      `json:"status"`
	StatusMessage  string                      `json:"statusMessage"`
	CreatedAt      string                      `json:"createdAt"`
	LastUpdatedAt  string                      `json:"lastUpdatedAt"`
	TTLMs          *int64                      `json:"ttlMs"`
	PollIntervalMs int64                       `json:"pollIntervalMs"`
	InputRequests  map[string]wireInputRequest `json:"inputRequests"`
	Result         json.RawMessage             `json:"result"`
	Error          json.RawMessage             `json:"error"`
}

type wireInputRequest struct {
	Method string `json:"method"`
	Params struct {
		Mode            string         `json:"mode"`
		Message         string         `json:"message"`
		RequestedSchema map[string]any `json:"requestedSchema"`
	} `json:"params"`
}

// taskClient is one host speaking 2026-07-28 with the extension declared
// (or not, with caps of its own).
type taskClient struct {
	t    testing.TB
	http *http.Client
	url  string
	caps map[string]any
	ids  atomic.Int64
	// version is the protocol version sent; "" is 2026-07-28.
	version string
	// rawID, when set, is every request's id as sent, instead of the
	// client's own numbers: for ids no client should send.
	rawID json.RawMessage

	// raw receives every response body's messages, for the schema checks.
	raw func(method string, msg json.RawMessage)
}

// tasksCaps declares the extension; withForms also takes form
// elicitations (the host door).
func tasksCaps(withForms bool) map[string]any {
	c := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	if withForms {
		c["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	return c
}

// post sends one request and returns the HTTP response.
func (c *taskClient) post(ctx context.Context, method, name string, params map[string]any) (*http.Response, int64, error) {
	version := c.version
	if version == "" {
		version = "2026-07-28"
	}
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "task-host", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": c.caps,
	}}
	for k, v := range params {
		p[k] = v
	}
	id := c.ids.Add(1)
	var wireID any = id
	if c.rawID != nil {
		wireID = c.rawID
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": wireID, "method": method, "params": p})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	res, err := c.http.Do(req)
	return res, id, err
}

// listen opens a subscriptions/listen stream for task ids; every message
// on it arrives on the channel, which closes with the stream.
func (c *taskClient) listen(ctx context.Context, ids ...string) (<-chan json.RawMessage, error) {
	res, _, err := c.post(ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"taskIds": ids}})
	if err != nil {
		return nil, err
	}
	out := make(chan json.RawMessage, 16)
	go func() {
		defer close(out)
		defer res.Body.Close()
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			var b bytes.Buffer
			_, _ = b.ReadFrom(res.Body)
			out <- b.Bytes()
			return
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- json.RawMessage(data)
			}
		}
	}()
	return out, nil
}

// send posts one request and returns its result or error.
func (c *taskClient) send(ctx context.Context, method, name string, params map[string]any) (json.RawMessage, error) {
	c.t.Helper()
	res, id, err := c.post(ctx, method, name, params)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var msgs []json.RawMessage
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				msgs = append(msgs, json.RawMessage(data))
			}
		}
	} else {
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		msgs = append(msgs, b.Bytes())
	}
	for _, m := range msgs {
		var r struct {
			ID     int64           `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if json.Unmarshal(m, &r) != nil || r.ID != id {
			continue
		}
		if c.raw != nil {
			c.raw(method, m)
		}
		if r.Error != nil {
			return nil, r.Error
		}
		return r.Result, nil
	}
	return nil, fmt.Errorf("%s: HTTP %d with no response to request %d", method, res.StatusCode, id)
}

// callTool calls a tool; the result is a task or a tool result.
func (c *taskClient) callTool(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	return c.send(ctx, "tools/call", name, map[string]any{"name": name, "arguments": args})
}

func (c *taskClient) get(ctx context.Context, id string) (wireTask, error) {
	raw, err := c.send(ctx, "tasks/get", id, map[string]any{"taskId": id})
	if err != nil {
		return wireTask{}, err
	}
	var t wireTask
	if err := json.Unmarshal(raw, &t); err != nil {
		c.t.Fatalf("tasks/get result %s: %v", raw, err)
	}
	return t, nil
}

func (c *taskClient) update(ctx context.Context, id string, responses map[string]any) error {
	_, err := c.send(ctx, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": responses})
	return err
}

func (c *taskClient) cancel(ctx context.Context, id string) error {
	_, err := c.send(ctx, "tasks/cancel", id, map[string]any{"taskId": id})
	return err
}

// task calls tool with args, whose result must be a task.
func (c *taskClient) task(ctx context.Context, tool string, args map[string]any) wireTask {
	c.t.Helper()
	raw, err := c.callTool(ctx, tool, args)
	if err != nil {
		c.t.Fatal(err)
	}
	return asTask(c.t, raw)
}

// asTask reads a tools/call result that must be a task.
func asTask(t testing.TB, raw json.RawMessage) wireTask {
	t.Helper()
	var w wireTask
	if err := json.Unmarshal(raw, &w); err != nil || w.ResultType != "task" || w.TaskID == "" {
		t.Fatalf("tools/call returned %s, want a task (%v)", raw, err)
	}
	return w
}

// tasksSchema compiles one definition of the pinned schema.
func tasksSchema(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "tasks", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tasks.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("tasks.json#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaCheck validates a message's result against the definition its
// method returns.
type schemaCheck struct {
	t    testing.TB
	defs map[string]*jsonschema.Schema
}

func newSchemaCheck(t *testing.T) *schemaCheck {
	return &schemaCheck{t: t, defs: map[string]*jsonschema.Schema{
		"task":         tasksSchema(t, "CreateTaskResult"),
		"tasks/get":    tasksSchema(t, "GetTaskResult"),
		"tasks/update": tasksSchema(t, "UpdateTaskResult"),
		"tasks/cancel": tasksSchema(t, "CancelTaskResult"),
		"error":        tasksSchema(t, "Error"),
	}}
}

func (s *schemaCheck) validate(def string, v json.RawMessage) {
	s.t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		s.t.Fatalf("%s: not JSON: %v", def, err)
	}
	if err := s.defs[def].Validate(doc); err != nil {
		s.t.Errorf("%s fails the pinned schema: %v\n%s", def, err, v)
	}
}

// message checks one JSON-RPC response of method.
func (s *schemaCheck) message(method string, m json.RawMessage) {
	s.t.Helper()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(m, &r); err != nil {
		s.t.Fatal(err)
	}
	switch {
	case r.Error != nil:
		s.validate("error", r.Error)
	case method == "tools/call":
		var rt struct {
			ResultType string `json:"resultType"`
		}
		_ = json.Unmarshal(r.Result, &rt)
		if rt.ResultType == "task" {
			s.validate("task", r.Result)
		}
	default:
		if _, ok := s.defs[method]; ok {
			s.validate(method, r.Result)
		}
	}
}

func jsonschemaDoc(b []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(b)) }
