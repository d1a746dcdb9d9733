package apierror_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
)

func TestWrite(t *testing.T) {
	w := httptest.NewRecorder()
	apierror.Write(w, 401, core.CodeForbidden, "a <valid> token & more")
	if w.Code != 401 {
		t.Errorf("status %d", w.Code)
	}
	for h, want := range map[string]string{
		"Content-Type":           "application/json; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-store",
	} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	// The message reads as written (no \u003c escapes), and decodes back.
	if got, want := w.Body.String(), `{"error":{"code":"forbidden","message":"a <valid> token & more"}}`+"\n"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	var b apierror.Body
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || b.Error.Code != core.CodeForbidden {
		t.Errorf("decoded %+v, %v", b, err)
	}
}

func TestWriteJSONRefusesWhatCannotEncode(t *testing.T) {
	w := httptest.NewRecorder()
	apierror.WriteJSON(w, 200, map[string]any{"f": func() {}})
	if w.Code != 500 || w.Body.String() != `{"error":{"code":"internal","message":"internal error"}}`+"\n" {
		t.Errorf("%d %q", w.Code, w.Body.String())
	}
}

// TestWriteJSONSharesNothingBetweenAnswers: the rendering buffers are
// reused from one answer to the next, so neither a longer body before nor
// a header a handler changed on one answer may show in the next.
func TestWriteJSONSharesNothingBetweenAnswers(t *testing.T) {
	long := httptest.NewRecorder()
	apierror.WriteJSON(long, 200, map[string]string{"text": strings.Repeat("x", 5000)})
	long.Header().Add("Cache-Control", "private")
	long.Header()["Content-Type"][0] = "text/plain" // a handler that overwrote a value in place

	short := httptest.NewRecorder()
	apierror.WriteJSON(short, 200, map[string]string{"a": "b"})
	if got := short.Body.String(); got != `{"a":"b"}`+"\n" {
		t.Errorf("body %q", got)
	}
	if got := short.Header().Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
		t.Errorf("Cache-Control %q, want only no-store", got)
	}
	if got := short.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", got)
	}
}

// failingBody is a request body whose read fails partway.
type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
func (failingBody) Close() error             { return nil }

// TestReadBody: a body within the limit is read whole; one over it is a
// 413 and one that cannot be read a 400, both in the error shape (before,
// Slack's endpoints answered a read that failed for any reason 413).
func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   io.ReadCloser
		ok     bool
		status int
		msg    string
	}{
		{"within the limit", io.NopCloser(strings.NewReader("12345678")), true, http.StatusOK, ""},
		{"over the limit", io.NopCloser(strings.NewReader("123456789")), false, http.StatusRequestEntityTooLarge, "larger than the limit of 8 bytes"},
		{"unreadable", failingBody{}, false, http.StatusBadRequest, "could not be read"},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Body = c.body
		body, ok := apierror.ReadBody(w, r, 8)
		if ok != c.ok || w.Code != c.status || ok && string(body) != "12345678" || !strings.Contains(w.Body.String(), c.msg) {
			t.Errorf("%s: ok %v, %d %s, body %q", c.name, ok, w.Code, w.Body, body)
		}
	}
}
