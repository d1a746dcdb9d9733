package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestErrorsIsMatchesTheCode: every refusal the API answers is an *Error
// that errors.Is matches to its code's Code, and to no other, however the
// client wrapped it (an ask given up on, a context that ended after a
// try); a body that was not the API's matches none. Before, a caller had
// to find the *Error with errors.As and compare its Code with a string
// of its own spelling ("conflict"): errors.Is(err, x) matched nothing.
func TestErrorsIsMatchesTheCode(t *testing.T) {
	all := []Code{ErrInvalid, ErrNotFound, ErrForbidden, ErrConflict, ErrInternal, ErrUnavailable}
	for _, c := range []struct {
		status int
		code   Code
	}{
		{http.StatusBadRequest, ErrInvalid},
		{http.StatusMethodNotAllowed, ErrInvalid},
		{http.StatusRequestEntityTooLarge, ErrInvalid},
		{http.StatusUnauthorized, ErrForbidden},
		{http.StatusForbidden, ErrForbidden},
		{http.StatusTooManyRequests, ErrForbidden},
		{http.StatusNotFound, ErrNotFound},
		{http.StatusConflict, ErrConflict},
		{http.StatusInternalServerError, ErrInternal},
		{http.StatusServiceUnavailable, ErrUnavailable},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(`{"error":{"code":"` + string(c.code) + `","message":"m"}}`))
		}))
		_, err := New(srv.URL, "t").Get(context.Background(), "aaaaaaaaaaaaaaaaa")
		srv.Close()
		for _, other := range all {
			if got := errors.Is(err, other); got != (other == c.code) {
				t.Errorf("%d %s: errors.Is(err, %s) = %v", c.status, c.code, other, got)
			}
		}
	}

	// Wrapped by Ask, which gives up on 5xx after its retries.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"code":"internal","message":"internal error"}}`))
	}))
	defer srv.Close()
	_, err := New(srv.URL, "t", WithRetryPause(time.Millisecond)).Ask(context.Background(), AskRequest{Question: "q"})
	if !errors.As(err, new(*AskError)) || !errors.Is(err, ErrInternal) {
		t.Errorf("an ask given up on: %v", err)
	}
	// Wrapped with the context's end, which cut the pause after a try
	// short: both match.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := New(srv.URL, "t", WithRetryPause(time.Hour)).GetRetried(ctx, "aaaaaaaaaaaaaaaaa"); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrInternal) {
		t.Errorf("a read stopped by its context: %v", err)
	}

	// A proxy's page has no code.
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	defer foreign.Close()
	_, err = New(foreign.URL, "t").Get(context.Background(), "aaaaaaaaaaaaaaaaa")
	for _, code := range all {
		if errors.Is(err, code) {
			t.Errorf("a proxy's 502 matches %s", code)
		}
	}
	if ErrConflict.Error() != "askbridge: conflict" {
		t.Errorf("ErrConflict reads %q", ErrConflict.Error())
	}
}
