package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitGivesUpAPollTheServerNeverAnswers: a poll the server took and
// never answered (a replica that stalled, a connection that died without
// a reset) is given up once its timeout and the grace have passed, and
// the wait polls again and sees the question's close, saying the outage
// and its end. Before, one such poll held Wait for good, however long
// ago the question was answered on another replica.
func TestWaitGivesUpAPollTheServerNeverAnswers(t *testing.T) {
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if polls.Add(1) == 1 {
			<-r.Context().Done() // taken, never answered
			return
		}
		_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
	}))
	defer srv.Close()
	c := New(srv.URL, "t", WithPollTimeout(time.Millisecond), WithRetryPause(time.Millisecond))
	c.grace = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a guard, not a timing assertion
	defer cancel()
	var told []error
	res, err := c.WaitWith(ctx, "q", func(err error) { told = append(told, err) })
	if err != nil || res.State != "answered" || polls.Load() != 2 {
		t.Fatalf("wait past a poll never answered: %+v, %v after %d polls; want the close on the second", res, err, polls.Load())
	}
	if len(told) != 2 || !errors.Is(told[0], context.DeadlineExceeded) || told[1] != nil {
		t.Errorf("told %v; want the lost poll, then nil", told)
	}
}

// TestWaitPollsUnderProxiesIdleTimeout: the default long poll asks the
// server to hold it for less than the idle timeouts of the proxies in
// front of servers (30 s for the shortest common ones, 60 s for most), so
// a poll with no answer comes back open rather than cut by a proxy.
// Before, it asked for 60 s, and each poll behind such a proxy failed
// with the proxy's 504 (Wait rode them out, saying an outage every time).
func TestWaitPollsUnderProxiesIdleTimeout(t *testing.T) {
	const shortestIdle = 30 * time.Second
	asked := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- r.URL.Query().Get("timeout")
		_, _ = w.Write([]byte(`{"question_id":"q","state":"answered","resume":{"content":"x","structured":{}},"question":{}}`))
	}))
	defer srv.Close()
	if _, err := New(srv.URL, "t").Wait(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	got, err := time.ParseDuration(<-asked)
	if err != nil || got <= 0 || got >= shortestIdle {
		t.Fatalf("the default poll asked for %v (%v); want more than 0 and less than %v", got, err, shortestIdle)
	}
	// WithPollTimeout still sets it.
	if _, err := New(srv.URL, "t", WithPollTimeout(50*time.Second)).Wait(t.Context(), "q"); err != nil {
		t.Fatal(err)
	}
	if got := <-asked; got != "50s" {
		t.Fatalf("WithPollTimeout(50s) asked for %s", got)
	}
}
