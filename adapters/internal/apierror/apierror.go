// Package apierror writes askbridge's one error shape,
// {"error":{"code":"...","message":"..."}}, for every HTTP endpoint the
// adapters serve: the API, and the platforms' callback endpoints where the
// platform leaves the response to us. One writer keeps the shape, the
// headers and the codes the same on every door.
package apierror

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/askbridge/askbridge/core"
)

// Body is the error response's JSON.
type Body struct {
	Error Detail `json:"error"`
}

// Detail is the error itself: one of core's codes and a sentence for
// people.
type Detail struct {
	Code    core.Code `json:"code"`
	Message string    `json:"message"`
}

// Status maps core's vocabulary to HTTP, for every door alike.
func Status(code core.Code) int {
	switch code {
	case core.CodeInvalid:
		return http.StatusBadRequest
	case core.CodeNotFound:
		return http.StatusNotFound
	case core.CodeForbidden:
		return http.StatusForbidden
	case core.CodeConflict:
		return http.StatusConflict
	case core.CodeUnavailable:
		return http.StatusServiceUnavailable // with Retry-After: the store is failing over
	default:
		return http.StatusInternalServerError
	}
}

// Write answers with status and the error body. HTML escaping is off so a
// message reads as written; nosniff and no-store go with every answer.
func Write(w http.ResponseWriter, status int, code core.Code, msg string) {
	WriteJSON(w, status, Body{Error: Detail{Code: code, Message: msg}})
}

// ReadBody reads r's body, at most limit bytes. A body over the limit is
// answered 413, one that cannot be read (the client went quiet or away)
// 400, both in the error shape; ok is false then, and nothing more is to
// be written.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		Write(w, http.StatusRequestEntityTooLarge, core.CodeInvalid, fmt.Sprintf("the request body is larger than the limit of %d bytes", limit))
		return nil, false
	}
	if err != nil {
		Write(w, http.StatusBadRequest, core.CodeInvalid, "the request body could not be read")
		return nil, false
	}
	return body, true
}

// Encode renders v as the API writes a body: JSON with HTML escaping off
// (a message reads as written), ending in a newline.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encode(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func encode(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// bodies holds the buffers WriteJSON renders in: a burst of answers and
// wake-ups writes thousands of bodies a second, and a buffer of its own
// would grow several times for each, only to be dropped once written.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer kept for reuse, so that one huge
// page of questions does not stay pinned in the pool.
const maxPooledBody = 64 << 10

// internalError is the body of an answer whose value did not encode.
var internalError = []byte(`{"error":{"code":"internal","message":"internal error"}}` + "\n")

// WriteJSON writes v as the response with status and the API's headers.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := bodies.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodies.Put(buf)
		}
	}()
	b := internalError
	if err := encode(buf, v); err == nil {
		b = buf.Bytes()
	} else {
		// Our own types always encode; reaching this is a bug.
		status = http.StatusInternalServerError
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
