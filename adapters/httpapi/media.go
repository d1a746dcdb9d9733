package httpapi

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/askbridge/askbridge/core"
)

// The API reads every request body as JSON, whatever the request says it
// is: `curl -d '{...}'` labels its JSON a form, and refusing that would
// break callers that work. A body that is not JSON, though, is answered
// by what the headers say of it when they say why: a caller that sent a
// form, or compressed its body, reads "send JSON" or "send it
// uncompressed" with 415, rather than a JSON parser's complaint about
// byte 0 with 400.

// mediaError is a body that is not JSON because it was sent as
// something else: 415 Unsupported Media Type, its message saying what
// to send.
type mediaError struct {
	msg string
	// encoded: the body was compressed (Content-Encoding), and the
	// answer says which codings the API takes (Accept-Encoding).
	encoded bool
}

func (e *mediaError) Error() string { return e.msg }

// maxQuotedHeader bounds how much of a header a refusal quotes back.
const maxQuotedHeader = 100

// mediaProblem is the refusal of body b, which did not decode, when r's
// headers say why it is not JSON; nil when they do not (no body, a body
// that is JSON refused for what it holds, one sent as JSON and not JSON),
// which keeps the decoder's own message.
func mediaProblem(r *http.Request, b []byte) error {
	if len(strings.TrimSpace(string(b))) == 0 || json.Valid(b) {
		return nil
	}
	for _, enc := range r.Header.Values("Content-Encoding") {
		if e := strings.TrimSpace(enc); e != "" && !strings.EqualFold(e, "identity") {
			return &mediaError{encoded: true, msg: fmt.Sprintf(
				"the request body is sent with Content-Encoding %q, which the API does not take: send it uncompressed, as JSON",
				logged(enc, maxQuotedHeader))}
		}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &mediaError{msg: fmt.Sprintf(
		"the request body must be JSON, sent with Content-Type: application/json; this one is sent as %q and is not JSON",
		logged(ct, maxQuotedHeader))}
}

// writeMediaError answers e: 415, and for a compressed body the one
// coding the API takes.
func writeMediaError(w http.ResponseWriter, e *mediaError) {
	if e.encoded {
		w.Header().Set("Accept-Encoding", "identity")
	}
	writeErrorStatus(w, http.StatusUnsupportedMediaType, core.CodeInvalid, e.msg)
}
