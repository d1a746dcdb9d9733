package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// These tests pin the client's own handling of HTTP (errors that are not
// the API's, retries, the SSE parser) against tiny HTTP handlers. The
// client against the real server is tested in package httpapi and in the
// examples.

func TestErrorFromForeignBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer srv.Close()
	_, err := New(srv.URL, "t").Get(context.Background(), "aaaaaaaaaaaaaaaaa")
	var e *Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "" || !strings.Contains(e.Message, "bad gateway") {
		t.Fatalf("got %v", err)
	}
}

func TestErrorFromAPIBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		}
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such question"}}`))
	}))
	defer srv.Close()
	_, err := New(srv.URL+"/", "tok").Get(context.Background(), "x/y")
	want := &Error{Status: 404, Code: "not_found", Message: "no such question"}
	var e *Error
	if !errors.As(err, &e) || *e != *want {
		t.Fatalf("got %v", err)
	}
	if err.Error() != "askbridge: HTTP 404 not_found: no such question" {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestWaitRidesOutTransientFailures(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query().Get("timeout"); got != "2s" {
			t.Errorf("timeout %q", got)
		}
		w.Header().Set("Content-Type", "application/json")
		switch calls.Add(1) {
		case 1:
			_, _ = w.Write([]byte(`{"question_id":"q","state":"open","question":{}}`))
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
		}
	}))
	defer srv.Close()
	res, err := New(srv.URL, "t", WithPollTimeout(2*time.Second)).Wait(context.Background(), "q")
	if err != nil || res.State != "answered" || res.Resume.Text != "x" || calls.Load() != 3 {
		t.Fatalf("res %+v err %v calls %d", res, err, calls.Load())
	}
}

func TestWaitStopsOnOtherErrorsAndOnContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "gone") {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no such question"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"question_id":"q","state":"open","question":{}}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "t")
	var e *Error
	if _, err := c.Wait(context.Background(), "gone"); !errors.As(err, &e) || e.Status != 404 {
		t.Fatalf("unknown question: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var polls atomic.Int32
	c = New(srv.URL, "t", WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if polls.Add(1) == 3 {
			cancel()
		}
		return http.DefaultTransport.RoundTrip(r)
	})}))
	if _, err := c.Wait(ctx, "q"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestReadSSE(t *testing.T) {
	stream := ": keep-alive\n\n" +
		"id: 1\nevent: asked\ndata: {\"a\":1}\n\n" +
		"id:2\nevent:answered\ndata: line one\ndata: line two\nretry: 10\nunknown\n\n" +
		"event: empty\n\n" +
		"id: 3\ndata: last, no blank line"
	var got []sseMessage
	err := readSSE(strings.NewReader(stream), func(m sseMessage) error {
		got = append(got, m)
		return nil
	})
	want := []sseMessage{
		{id: "1", event: "asked", data: `{"a":1}`},
		{id: "2", event: "answered", data: "line one\nline two"},
	}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
