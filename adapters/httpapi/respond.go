package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// MaxBodyBytes caps every request body; a larger one gets 413.
const MaxBodyBytes = 1 << 20

// statusOf maps core's vocabulary to HTTP.
func statusOf(code core.Code) int {
	switch code {
	case core.CodeInvalid:
		return http.StatusBadRequest
	case core.CodeNotFound:
		return http.StatusNotFound
	case core.CodeForbidden:
		return http.StatusForbidden
	case core.CodeConflict:
		return http.StatusConflict
	default:
		return http.StatusInternalServerError
	}
}

// writeJSON writes v with status. HTML escaping is off so that resume text
// reads as it is (the content type is JSON, and nosniff is set).
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Our own types always encode; reaching this is a bug.
		http.Error(w, `{"error":{"code":"internal","message":"internal error"}}`, http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeErrorStatus writes the error body with an explicit status, for the
// few statuses core's vocabulary does not produce (401, 405, 413, 503).
func writeErrorStatus(w http.ResponseWriter, status int, code core.Code, msg string) {
	writeJSON(w, status, client.ErrorBody{Error: client.ErrorDetail{Code: code, Message: msg}})
}

// fail answers with err mapped through core's vocabulary. Only internal
// errors are logged: the rest are the caller's doing and are already in
// the access log as a status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := core.ErrorCode(err)
	if code == core.CodeInternal {
		s.log.Error().Err(err).Str("method", r.Method).Str("path", r.URL.Path).Msg("internal error")
	}
	writeErrorStatus(w, statusOf(code), code, core.ErrorMessage(err))
}

// invalid is a coded CodeInvalid error for the API's own checks.
func invalid(format string, args ...any) error {
	return core.Errorf(core.CodeInvalid, "http", format, args...)
}

// errTooLarge marks a body over MaxBodyBytes.
var errTooLarge = errors.New("request body too large")

// readBody reads at most MaxBodyBytes of r's body.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, invalid("could not read the request body: %v", err)
	}
	return b, nil
}

// decode reads a JSON body into dst, strictly: unknown fields, trailing
// data and wrong types are refused with a message naming what is wrong.
// An empty body is refused when required and leaves dst untouched
// otherwise. It writes the error response itself and reports whether the
// handler should go on.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, dst any, required bool) bool {
	b, err := readBody(w, r)
	if err == nil {
		err = decodeJSON(b, dst, required)
	}
	return s.bodyError(w, r, err)
}

// noBody refuses any request body at all (413 over the cap, 400 for
// anything else non-empty) and reports whether the handler should go on.
func (s *Server) noBody(w http.ResponseWriter, r *http.Request, msg string) bool {
	b, err := readBody(w, r)
	if err == nil && len(b) > 0 {
		err = invalid("%s", msg)
	}
	return s.bodyError(w, r, err)
}

// bodyError writes the response for a body that could not be taken and
// reports whether there was none to write.
func (s *Server) bodyError(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, errTooLarge):
		writeErrorStatus(w, http.StatusRequestEntityTooLarge, core.CodeInvalid,
			fmt.Sprintf("the request body is larger than the limit of %d bytes", MaxBodyBytes))
	default:
		s.fail(w, r, err)
	}
	return false
}

func decodeJSON(b []byte, dst any, required bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		if required {
			return invalid("a JSON request body is required")
		}
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return invalid("%s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("the request body holds more than one JSON value")
	}
	return nil
}

// jsonProblem turns a decoding error into a message for the caller that
// names the offending field where there is one.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("the request body is not valid JSON (at byte %d): %s", syntax.Offset, strings.TrimPrefix(msg, "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the request body is not valid JSON: it ends too early"
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q cannot be a JSON %s", typ.Field, typ.Value)
		}
		return fmt.Sprintf("the request body must be a JSON object, not a JSON %s", typ.Value)
	case strings.HasPrefix(msg, "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(msg, "json: unknown field ") + " in the request body"
	}
	return strings.TrimPrefix(msg, "json: ")
}
