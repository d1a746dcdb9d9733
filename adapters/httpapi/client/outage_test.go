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

// TestRetryPauseNeverZero: a retry pause of zero or less keeps the
// default, so a Wait on a server that is down pauses between polls
// rather than spin (doubled, a zero pause stays zero).
func TestRetryPauseNeverZero(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if c := New("http://127.0.0.1:1", "t", WithRetryPause(d)); c.pause <= 0 {
			t.Errorf("WithRetryPause(%v): the first pause is %v", d, c.pause)
		}
	}
	if c := New("http://127.0.0.1:1", "t", WithRetryPause(time.Millisecond)); c.pause != time.Millisecond {
		t.Errorf("WithRetryPause(1ms): the first pause is %v", c.pause)
	}
}
