package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
)

// MaxBodyBytes caps every request body; a larger one gets 413.
const MaxBodyBytes = 1 << 20

// statusOf maps core's vocabulary to HTTP.
func statusOf(code core.Code) int { return apierror.Status(code) }

// writeJSON writes v with status and the API's headers.
func writeJSON(w http.ResponseWriter, status int, v any) { apierror.WriteJSON(w, status, v) }

// writeErrorStatus writes the error body with an explicit status, for the
// few statuses core's vocabulary does not produce (401, 405, 413, 503).
func writeErrorStatus(w http.ResponseWriter, status int, code core.Code, msg string) {
	apierror.Write(w, status, code, msg)
}

// WriteError answers with askbridge's error shape, for handlers the
// program mounts beside the API (the MCP endpoint's token check, say), so
// they speak as the API does.
func WriteError(w http.ResponseWriter, status int, code core.Code, msg string) {
	apierror.Write(w, status, code, msg)
}

// fail answers with err mapped through core's vocabulary. Only internal
// errors are logged: the rest are the caller's doing and are already in
// the access log as a status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.failAt(w, r.Method, r.URL.Path, err)
}

// failAt is fail for a request known by its method and path, as a wait
// answering on a connection taken over from net/http knows it.
func (s *Server) failAt(w http.ResponseWriter, method, path string, err error) {
	code := core.ErrorCode(err)
	if code == core.CodeInternal && s.unavailable(err) {
		// The store is failing over: not a failure of ours, and a retry
		// in a moment will do (its outcome, if it was in fact recorded).
		s.log.Warn().Err(err).Str("method", method).Str("path", path).Msg("the store is unavailable: answered 503")
		unavailable(w, core.UnavailableMessage)
		return
	}
	if code == core.CodeInternal {
		s.log.Error().Err(err).Str("method", method).Str("path", path).Msg("internal error")
	}
	writeErrorStatus(w, statusOf(code), code, core.ErrorMessage(err))
}

// retryAfter is what a 503 for an unavailable store asks a client to
// wait, in seconds: a failover's promotion takes a few, and a client
// that retries sooner only adds to the load meanwhile.
const retryAfter = "1"

// unavailable answers 503 with Retry-After: the store is failing over or
// unreachable, and the request may be sent again.
func unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", retryAfter)
	writeErrorStatus(w, statusOf(core.CodeUnavailable), core.CodeUnavailable, msg)
}

// invalid is a coded CodeInvalid error for the API's own checks.
func invalid(format string, args ...any) error {
	return core.Errorf(core.CodeInvalid, "http", format, args...)
}

// errTooLarge marks a body over MaxBodyBytes.
var errTooLarge = errors.New("request body too large")

// readBody reads at most MaxBodyBytes of r's body. A body that cannot be
// read (cut short, or too slow for the program's body deadline) is
// refused in the API's own words: net/http's error names the server's
// address and port and the peer's as the server sees it, which are not
// the caller's to read.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, invalid("the request body could not be read: it was cut short or sent too slowly")
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
		if err = decodeJSON(b, dst, required); err != nil {
			if media := mediaProblem(r, b); media != nil {
				err = media // not JSON, and the headers say why (media.go)
			}
		}
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
	var media *mediaError
	switch {
	case err == nil:
		return true
	case errors.Is(err, errTooLarge):
		writeErrorStatus(w, http.StatusRequestEntityTooLarge, core.CodeInvalid,
			fmt.Sprintf("the request body is larger than the limit of %d bytes", MaxBodyBytes))
	case errors.As(err, &media):
		writeMediaError(w, media)
	default:
		s.fail(w, r, err)
	}
	return false
}

// decodeJSON decodes b into dst with the strict rules every request body
// follows. encoding/json would quietly turn bad UTF-8 into U+FFFD, let the
// last of two equal keys win and match keys case-insensitively, so a body
// could be stored as something its sender never wrote. The JSON v2
// decoder refuses all three, and names where: invalid UTF-8 and duplicate
// keys anywhere in the document (approval arguments included), and any
// key that is not one of dst's fields spelled exactly (so "Question" is an
// unknown field, not a second "question"). A body of JSON null is refused
// like any other body that is not an object: decoded, it would leave dst
// as no body leaves it, and a cancel or an end of a run sent null went
// through as if nothing had been sent.
func decodeJSON(b []byte, dst any, required bool) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		if required {
			return invalid("a JSON request body is required")
		}
		return nil
	}
	if err := jsonv2.Unmarshal(b, dst, jsonv2.RejectUnknownMembers(true)); err != nil {
		return invalid("%s", jsonProblem(err))
	}
	if jsontext.Value(trimmed).Kind() == 'n' {
		if required {
			return invalid("the request body must be a JSON object, not a JSON null")
		}
		return invalid("the request body must be a JSON object, not a JSON null: send {} or no body at all")
	}
	return nil
}

// jsonProblem turns a decoding error into a message for the caller that
// names the offending field where there is one.
func jsonProblem(err error) string {
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	switch {
	case errors.As(err, &syn):
		at := fieldAt(syn.JSONPointer)
		switch {
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			// The pointer ends at the repeated key; name it in its object.
			return fmt.Sprintf("the request body has a duplicate key %q%s", syn.JSONPointer.LastToken(), fieldAt(syn.JSONPointer.Parent()))
		case strings.Contains(syn.Err.Error(), "invalid UTF-8"):
			return fmt.Sprintf("the request body is not valid UTF-8%s", at)
		case errors.Is(syn.Err, io.ErrUnexpectedEOF):
			return "the request body is not valid JSON: it ends too early"
		case strings.Contains(syn.Err.Error(), "after top-level value"):
			return "the request body holds more than one JSON value"
		}
		return fmt.Sprintf("the request body is not valid JSON (at byte %d): %v%s", syn.ByteOffset, syn.Err, at)
	case errors.As(err, &sem):
		if errors.Is(sem.Err, jsonv2.ErrUnknownName) {
			// By its path: "bogus" alone does not say which option,
			// call or item holds it.
			return fmt.Sprintf("unknown field %q in the request body", fieldPath(sem.JSONPointer))
		}
		if sem.JSONKind == '0' && isWhole(sem.GoType) && (errors.Is(sem.Err, strconv.ErrSyntax) || errors.Is(sem.Err, strconv.ErrRange)) {
			// strconv's own words ("invalid syntax") do not tell a caller
			// that sent 2.0 or 1e3 what was wanted. A type of its own
			// (a duration, which is text) refuses a number in its words,
			// below.
			if errors.Is(sem.Err, strconv.ErrRange) {
				return fmt.Sprintf("field %q is a whole number too large for it", fieldPath(sem.JSONPointer))
			}
			return fmt.Sprintf("field %q must be a whole number, written without a fraction or an exponent", fieldPath(sem.JSONPointer))
		}
		if sem.JSONPointer == "" {
			return fmt.Sprintf("the request body must be a JSON object, not a JSON %s", kindName(sem.JSONKind))
		}
		if sem.Err != nil && sem.GoType == nil {
			// A type's own UnmarshalJSON refused the value: its message
			// says what is wrong (a timeout that is not a duration, say).
			return fmt.Sprintf("field %q: %v", fieldPath(sem.JSONPointer), sem.Err)
		}
		if sem.Err != nil && !strings.Contains(sem.Err.Error(), "cannot unmarshal") {
			return fmt.Sprintf("field %q: %v", fieldPath(sem.JSONPointer), sem.Err)
		}
		return fmt.Sprintf("field %q cannot be a JSON %s", fieldPath(sem.JSONPointer), kindName(sem.JSONKind))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// isWhole reports whether t is an integer type, which a JSON number
// fills only when written as a whole number.
func isWhole(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// fieldPath names a JSON pointer as the field path people write
// ("/options/0/title" -> "options.0.title").
func fieldPath(p jsontext.Pointer) string {
	return strings.Join(slices.Collect(p.Tokens()), ".")
}

// fieldAt is " in field \"x\"" for a pointer into the body, "" for the root.
func fieldAt(p jsontext.Pointer) string {
	if p == "" {
		return ""
	}
	return fmt.Sprintf(" in field %q", fieldPath(p))
}

// kindName spells a JSON kind as the JSON grammar names it.
func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}
