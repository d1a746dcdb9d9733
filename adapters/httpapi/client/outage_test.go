package client

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitWithTellsEachOutageOnce: WaitWith tells its caller when polls
// start failing and when one gets through again, once per outage however
// many retries it rides out; GetRetried tries as Ask does, then gives up
// with the last error.
func TestWaitWithTellsEachOutageOnce(t *testing.T) {
	polls := []int{503, 502, 503, 200, 503, 500, 500, 0}
	var n, gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/questions/gone" {
			gets.Add(1)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		switch code := polls[min(int(n.Add(1))-1, len(polls)-1)]; code {
		case 200:
			_, _ = w.Write([]byte(`{"question_id":"q","state":"open","question":{}}`))
		case 0:
			_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
		default:
			w.WriteHeader(code)
		}
	}))
	defer srv.Close()
	c := New(srv.URL, "t", WithRetryPause(time.Millisecond))
	var told []bool // true: down
	res, err := c.WaitWith(t.Context(), "q", func(err error) { told = append(told, err != nil) })
	if err != nil || res.State != "answered" {
		t.Fatalf("wait: %+v, %v", res, err)
	}
	if want := []bool{true, false, true, false}; !slices.Equal(told, want) {
		t.Errorf("told %v (true: down), want %v", told, want)
	}

	var e *Error
	if _, err := c.GetRetried(t.Context(), "gone"); !errors.As(err, &e) || e.Status != http.StatusBadGateway || gets.Load() != askAttempts {
		t.Fatalf("get from a failing server: %v after %d tries, want its 502 after %d", err, gets.Load(), askAttempts)
	}
}
