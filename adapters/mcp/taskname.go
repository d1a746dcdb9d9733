package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Over streamable HTTP a 2026-07-28 task method names its task in the
// Mcp-Name header (the Tasks extension, "Routing Headers"), so that a
// load balancer or gateway can route and check on the header; and a
// server that reads the body must refuse a request whose header is
// missing or says something else than the body (the transport, "Server
// Validation"), or the two would act on different tasks. The SDK checks
// Mcp-Name only for the methods the core protocol names; the task
// methods are checked here, before the SDK serves them.

const nameHeader = "Mcp-Name"

// namedByTask are the methods whose Mcp-Name is params.taskId.
var namedByTask = map[string]bool{methodTaskGet: true, methodTaskUpdate: true, methodTaskCancel: true}

// taskNameRefused returns the id and the refusal of r if it is a
// 2026-07-28 task method whose Mcp-Name is missing, malformed, or not its
// params.taskId; nil otherwise. A request that is no task method, or that
// the SDK refuses anyway (an earlier or missing version header, a batch,
// an id that is not one), is left to the SDK, which refuses it with the
// code that fits.
func taskNameRefused(r *http.Request) (json.RawMessage, *jsonrpc.Error) {
	// The SDK refuses a request whose Mcp-Method is not the body's
	// method, so the header picks out the task methods, however the body
	// spells its method, at no cost to the other requests.
	if r.Header.Get(versionHeader) < protocolStateless || !namedByTask[r.Header.Get(methodHeader)] || rebinding(r) {
		return nil, nil
	}
	// Read as the SDK reads it (its decoder, keys matched exactly): a
	// decoder that matches a key whatever its case would read another
	// method, or another task, than the one the SDK serves.
	msg, err := jsonrpc.DecodeMessage(peekBody(r))
	req, _ := msg.(*jsonrpc.Request)
	if err != nil || req == nil || !namedByTask[req.Method] || !req.IsCall() {
		return nil, nil
	}
	id, err := json.Marshal(req.ID.Raw())
	if err != nil {
		return nil, nil
	}
	var params map[string]json.RawMessage
	var taskID *string
	if json.Unmarshal(req.Params, &params) == nil {
		if raw, ok := params["taskId"]; ok && json.Unmarshal(raw, &taskID) != nil {
			taskID = nil // not a string: the method's own refusal answers
		}
	}
	raw := r.Header.Get(nameHeader)
	if raw == "" {
		return id, &jsonrpc.Error{Code: mcpsdk.CodeHeaderMismatch, Message: "the " + nameHeader + " header is required for " + req.Method + ": it names the task, as params.taskId does"}
	}
	name, ok := headerValue(raw)
	if !ok {
		return id, &jsonrpc.Error{Code: mcpsdk.CodeHeaderMismatch, Message: "the " + nameHeader + " header is not valid base64 within =?base64?...?="}
	}
	if taskID != nil && name != *taskID {
		// Without a taskId in the body, the method's own refusal answers.
		return id, &jsonrpc.Error{Code: mcpsdk.CodeHeaderMismatch, Message: "the " + nameHeader + " header must name the task that params.taskId names"}
	}
	return nil, nil
}

// headerValue is a standard header's value as the transport encodes it:
// as it is, or base64 between =?base64? and ?= (for a value that is not
// plain ASCII). false if the base64 does not decode.
func headerValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	return string(b), err == nil
}
