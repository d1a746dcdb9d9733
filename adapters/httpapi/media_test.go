package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
)

// TestABodySentAsSomethingElseSaysToSendJSON: a body that is not JSON and
// whose request says it is something else (a form, as curl -d sends, or
// compressed) is refused with 415, the API's error shape, code invalid,
// and a message that says what to send, naming the header; nothing is
// stored. Before, each was a 400 whose message was the JSON parser's
// complaint about its first byte ("invalid character 'k' at start of
// value", "invalid character '\x1f'"), which says nothing of what to do.
// JSON labelled as something else is still taken, as curl -d sends it,
// and a body sent as JSON that is not keeps the parser's 400.
func TestABodySentAsSomethingElseSaysToSendJSON(t *testing.T) {
	e := newEnv(t)
	ask, err := json.Marshal(clarification("run-media"))
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(ask)
	_ = zw.Close()

	before := snapshot(t, e.store)
	for _, c := range []struct {
		name, body string
		hdr        []string
		status     int
		says       []string
	}{
		{"a form", "kind=clarification&question=Which+database", []string{"Content-Type", "application/x-www-form-urlencoded"},
			http.StatusUnsupportedMediaType, []string{"must be JSON", "Content-Type: application/json", `"application/x-www-form-urlencoded"`}},
		{"text", "Which database?", []string{"Content-Type", "text/plain; charset=utf-8"},
			http.StatusUnsupportedMediaType, []string{"must be JSON", `"text/plain; charset=utf-8"`}},
		{"compressed", zipped.String(), []string{"Content-Type", "application/json", "Content-Encoding", "gzip"},
			http.StatusUnsupportedMediaType, []string{"Content-Encoding \"gzip\"", "send it uncompressed"}},
		{"not JSON, sent as JSON", "{bad", []string{"Content-Type", "application/json"},
			http.StatusBadRequest, []string{"not valid JSON"}},
		{"not JSON, sent as nothing", "{bad", nil,
			http.StatusBadRequest, []string{"not valid JSON"}},
		{"no body, sent as text", "", []string{"Content-Type", "text/plain"},
			http.StatusBadRequest, []string{"a JSON request body is required"}},
	} {
		r := e.do(http.MethodPost, "/v1/questions", &agentA, c.body, c.hdr...)
		if r.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, r.status, r.body, c.status)
			continue
		}
		got := errorOf(t, r)
		if got.Code != core.CodeInvalid {
			t.Errorf("%s: code %q", c.name, got.Code)
		}
		for _, want := range c.says {
			if !strings.Contains(got.Message, want) {
				t.Errorf("%s: %q does not say %q", c.name, got.Message, want)
			}
		}
		if enc := r.header.Get("Accept-Encoding"); (c.name == "compressed") != (enc == "identity") {
			t.Errorf("%s: Accept-Encoding %q", c.name, enc)
		}
	}
	if d := cmp.Diff(before, snapshot(t, e.store)); d != "" {
		t.Errorf("a refused body changed the store:\n%s", d)
	}

	// JSON is JSON, whatever it is labelled: curl -d sends it as a form.
	if r := e.do(http.MethodPost, "/v1/questions", &agentA, string(ask), "Content-Type", "application/x-www-form-urlencoded"); r.status != http.StatusCreated {
		t.Fatalf("JSON sent as a form: %d %s", r.status, r.body)
	}
	// Refused for what it holds, not for its label: the field is named.
	if r := e.do(http.MethodPost, "/v1/questions", &agentA, `{"bogus":1}`, "Content-Type", "text/plain"); r.status != http.StatusBadRequest ||
		!strings.Contains(errorOf(t, r).Message, `unknown field "bogus"`) {
		t.Fatalf("JSON with an unknown field, sent as text: %d %s", r.status, r.body)
	}
}
