package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitRidesOutA500: one 500 (the store failing for a moment) does not
// end an hours-long wait; before, it did, with the question still open.
// A server that keeps answering 500 still ends it.
func TestWaitRidesOutA500(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 || r.URL.Path == "/v1/questions/broken/wait" {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"code":"internal","message":"internal error"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "t")
	c.pause = time.Millisecond
	if res, err := c.Wait(t.Context(), "q"); err != nil || res.State != "answered" {
		t.Fatalf("wait after one 500: %+v, %v", res, err)
	}
	var e *Error
	if _, err := c.Wait(t.Context(), "broken"); !errors.As(err, &e) || e.Status != http.StatusInternalServerError {
		t.Fatalf("wait on a server that keeps failing: %v, want its 500", err)
	}
}

// TestWaitDoesNotSpin: polls answered open at once (a poll timeout of 0)
// are paced; before, Wait sent them back to back.
func TestWaitDoesNotSpin(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = w.Write([]byte(`{"question_id":"q","state":"open","question":{}}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 600*time.Millisecond)
	defer cancel()
	if _, err := New(srv.URL, "t", WithPollTimeout(0)).Wait(ctx, "q"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait: %v", err)
	}
	if n := calls.Load(); n > 10 {
		t.Errorf("%d polls in 600 ms, each answered at once; want them paced", n)
	}
}

// TestFollowEndsOnAnEventItCannotRead: an event the client cannot decode
// ends Follow with an error; before, Follow asked again from the same
// place, got the same event and retried for ever.
func TestFollowEndsOnAnEventItCannotRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("id: 1\ndata: {bad\n\n"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	err := New(srv.URL, "t").Follow(ctx, 0, func(Event) error { return nil })
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("follow over an unreadable event: %v, want its error", err)
	}
}

// TestAskDoesNotRetryARequestItCannotMake: arguments that are not JSON
// cannot be encoded, and never will be: Ask fails at once, sending
// nothing, and does not say the question may have been parked. Before,
// it retried for seconds as if the network had failed, then returned an
// *AskError.
func TestAskDoesNotRetryARequestItCannotMake(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	_, err := New(srv.URL, "t").Ask(t.Context(), AskRequest{Kind: "approval", Question: "Delete?", Reversibility: "reversible",
		RunID: "r", Tool: "rm", Arguments: []byte("{bad")})
	var unknown *AskError
	if err == nil || errors.As(err, &unknown) || calls.Load() != 0 {
		t.Fatalf("ask with arguments that are not JSON: %v (an *AskError: %v), %d requests; want a plain error and none sent",
			err, errors.As(err, &unknown), calls.Load())
	}
}

// TestWaitAndFollowEndOnARequestTheyCannotMake: a base URL that does not
// parse ends Wait and Follow with its error; it is not a network failure
// to wait out for ever.
func TestWaitAndFollowEndOnARequestTheyCannotMake(t *testing.T) {
	c := New("http://[::1", "t")
	c.pause = time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := c.Wait(ctx, "q"); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait with a bad base URL: %v; want its error at once", err)
	}
	if err := c.Follow(ctx, 0, func(Event) error { return nil }); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("follow with a bad base URL: %v; want its error at once", err)
	}
}

// TestAskOrRepeatReadsTheStatus: AskOrRepeat says repeat for the
// server's 200 (an ask it had parked before) and not for its 201, and
// for its own retry after a failure that the server answers 200.
func TestAskOrRepeatReadsTheStatus(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(http.StatusCreated)
		case 3: // the reply to the first try of the third ask is lost
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(`{"id":"q","state":"open"}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "t")
	c.pause = time.Millisecond
	for i, want := range []bool{false, true, true} {
		q, repeat, err := c.AskOrRepeat(t.Context(), AskRequest{ToolCallID: "call-1"})
		if err != nil || q.ID != "q" || repeat != want {
			t.Errorf("ask %d: %+v, repeat %v, %v; want repeat %v", i+1, q, repeat, err, want)
		}
	}
}

// TestWaitAndAskWaitOutA429: a 429 with Retry-After (the address held
// after another process's wrong tokens, for a token never seen succeed
// from it) is waited out as the server asks, by Wait and by Ask; before,
// both gave up at once with a valid token.
func TestWaitAndAskWaitOutA429(t *testing.T) {
	var waits, asks atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		n := &waits
		if r.Method == http.MethodPost {
			n = &asks
		}
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"code":"forbidden","message":"too many wrong tokens from this address: try again in 1 seconds"}}`))
			return
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"q","kind":"clarification","state":"open"}`))
			return
		}
		_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "t")
	c.pause = time.Millisecond
	if res, err := c.Wait(t.Context(), "q"); err != nil || res.State != "answered" {
		t.Fatalf("wait after a 429: %+v, %v", res, err)
	}
	if q, err := c.Ask(t.Context(), AskRequest{Kind: "clarification", Question: "Which?", Reversibility: "reversible"}); err != nil || q.ID != "q" {
		t.Fatalf("ask after a 429: %+v, %v", q, err)
	}
}

// TestARetryStoppedReadsAsStopped: an ask (and GetRetried) whose ctx
// ends between its tries returns an error in which errors.Is finds ctx's
// error, as in Wait's, still carrying the last try's 503 and, for an
// ask, its key. Before, it returned the 503 alone, so a caller that had
// stopped read a server failure as the reason.
func TestARetryStoppedReadsAsStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := New("http://askbridge.invalid", "t", WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		cancel() // the caller stops while the server's store fails over
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: r,
			Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}},
			Body:   io.NopCloser(strings.NewReader(`{"error":{"code":"unavailable","message":"the store is failing over"}}`))}, nil
	})}))
	var e *Error
	_, err := c.Ask(ctx, AskRequest{Kind: "clarification", Question: "Which?", Reversibility: "reversible", RunID: "r"})
	var unknown *AskError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &unknown) || unknown.Key == "" || !errors.As(err, &e) || !e.Unavailable() {
		t.Errorf("ask stopped between tries: %v; want context.Canceled with the 503 and an *AskError with its key", err)
	}
	if _, err := c.GetRetried(ctx, "q"); !errors.Is(err, context.Canceled) || !errors.As(err, &e) || !e.Unavailable() {
		t.Errorf("GetRetried stopped between tries: %v; want context.Canceled with the 503", err)
	}
}
