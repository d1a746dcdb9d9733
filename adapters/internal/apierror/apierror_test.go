package apierror_test

import (
	"encoding/json"
	"net/http/httptest"
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
