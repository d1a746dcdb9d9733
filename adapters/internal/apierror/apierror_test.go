package apierror_test

import (
	"encoding/json"
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
