package mcp

import (
	"errors"
	"fmt"

	"github.com/askbridge/askbridge/adapters/internal/addressfault"
	"github.com/askbridge/askbridge/core"
)

// How a call is told of a bridge it could not reach. Only a backend over
// the API (`askbridge mcp`) meets these failures: the API client's errors,
// read here through the small interfaces below (an adapter imports no
// other adapter), and addressfault for an address no retry mends. Over
// /mcp the backend is core, whose errors are neither.

// keyedAsk is an ask the backend gave up on not knowing whether it was
// parked, with the Idempotency-Key that gets it back (the API client's
// *AskError).
type keyedAsk interface {
	error
	IdempotencyKey() string
}

// responseError is a server's answer other than success (the API client's
// *Error), read for its HTTP status.
type responseError interface {
	error
	Response() (status int, code, message string)
}

// misaddressed is why err, a failure to reach the bridge, will not mend
// by trying again, or "": the address the bridge is reached at is wrong
// (addressfault.Of: a host DNS does not know, the wrong scheme), a
// setting to fix, which a wait retried as an outage would hide for a
// minute a call, then tell the model only to try again later. Once the
// bridge has answered this server at all (reached, heard), its address
// was right, and a fault then is the server gone for a moment (a compose
// service's name while its container restarts), ridden out as any outage
// is.
func (h *handler) misaddressed(err error) string {
	if h.reached.Load() {
		return ""
	}
	fault := addressfault.Of(err)
	if fault == "" {
		return ""
	}
	return fmt.Sprintf("the address of the askbridge server is wrong (%s), which trying again will not mend: %s", fault, h.safeMessage(err))
}

// heard notes what a call to the backend shows of the bridge's address:
// a success, a refusal (a core error of the bridge's own, as the backend
// words the API's 4xx) or any other response of a server at it (a 503,
// a proxy's page) is an answer there, so the address is right, as the
// API client reckons it (client.Client's reached). A TLS server's
// refusal of plain HTTP answers too, but says the address is wrong.
func (h *handler) heard(err error) {
	if h.reached.Load() {
		return
	}
	if err == nil {
		h.reached.Store(true)
		return
	}
	if _, ok := errors.AsType[responseError](err); ok && addressfault.Of(err) == "" {
		h.reached.Store(true)
		return
	}
	switch core.ErrorCode(err) {
	case "", core.CodeInternal:
	default:
		h.reached.Store(true)
	}
}

// askFailed is what a caller is told of a failed ask. One that failed on
// the way (the connection dropped, the server or its store failing) may
// have been parked all the same: a lost reply reads just as a lost ask
// does. Told only that it failed, a model asks again in other words, or
// goes on alone, and people answer a question nobody collects; so it is
// told that the question may be parked, and how to get it rather than
// ask twice: the same call again, which the bridge's idempotency answers
// with the question it parked, if it has the call's key. A refusal, or
// an ask to a wrong address or to a server that is not askbridge, parked
// nothing and is told as it is.
func (h *handler) askFailed(in core.AskInput, err error) error {
	if why := h.misaddressed(err); why != "" {
		return errors.New(why)
	}
	told := h.toolError(err)
	if !mayBeParked(err) {
		return told
	}
	var key keyedAsk
	switch {
	case in.ToolCallID != "" || len(in.Calls) > 0:
		how := "the same tool_call_id"
		if in.ToolCallID != "" {
			how = fmt.Sprintf("the same tool_call_id (%q)", in.ToolCallID)
		}
		return fmt.Errorf("%w. The question may have been parked all the same (a reply lost on the way reads as an ask that never arrived): "+
			"to get it rather than ask people twice, send this same call again, unchanged and with %s, once the server answers "+
			"(a question the call parked comes back, with its answer when it has one; if none was parked, it is parked then)", told, how)
	case errors.As(err, &key):
		return fmt.Errorf("%w. The question may have been parked all the same (a reply lost on the way reads as an ask that never arrived): "+
			"to get it rather than ask people twice, send this same call again, unchanged, once the server answers: "+
			"this MCP server sends it again under the same idempotency key (%s), so a question it parked comes back, and if none was parked, it is parked then", told, key.IdempotencyKey())
	}
	return fmt.Errorf("%w. The question may have been parked all the same, and this call had no tool_call_id to find it by: "+
		"asking again may put it to people twice (give each call a tool_call_id, which makes sending it again safe)", told)
}

// mayBeParked reports whether a failed ask may have been parked: it
// failed on the way (transient), to the right address, and not by a
// response that refuses it (a 4xx, or a page of something other than
// askbridge, which the API client does not retry).
func mayBeParked(err error) bool {
	if !transient(err) || addressfault.Of(err) != "" {
		return false
	}
	r, ok := errors.AsType[responseError](err)
	if !ok {
		return true
	}
	status, _, _ := r.Response()
	return status >= 500
}
