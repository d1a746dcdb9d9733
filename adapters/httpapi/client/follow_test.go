package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestFollowResumesAStreamThatWentSilent: an event stream that goes
// silent (no event, no keep-alive: a replica that stalled, a connection
// that died without a reset) is given up and resumed from the last event
// seen, so the events after it still arrive. Before, Follow read the
// silent stream for good: it returned only when ctx ended, having missed
// everything logged since.
func TestFollowResumesAStreamThatWentSilent(t *testing.T) {
	var streams atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if streams.Add(1) == 1 {
			_, _ = w.Write([]byte("id: 1\nevent: asked\ndata: {\"seq\":1}\n\n"))
		} else {
			if got := r.URL.Query().Get("since"); got != "1" {
				t.Errorf("the stream resumed after %q, want 1", got)
			}
			_, _ = w.Write([]byte("id: 2\nevent: answered\ndata: {\"seq\":2}\n\n"))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then silent
	}))
	defer srv.Close()
	c := New(srv.URL, "t", WithRetryPause(time.Millisecond))
	c.idle = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a guard, not a timing assertion
	defer cancel()
	var seen []int64
	enough := errors.New("seen the event after the silence")
	err := c.Follow(ctx, 0, func(e Event) error {
		seen = append(seen, e.Seq)
		if e.Seq == 2 {
			return enough
		}
		return nil
	})
	if !errors.Is(err, enough) || !slices.Equal(seen, []int64{1, 2}) || streams.Load() != 2 {
		t.Fatalf("follow over a stream that went silent: %v, saw %v over %d streams; want events 1 and 2, the second on a resumed stream",
			err, seen, streams.Load())
	}
}

// TestFollowWaitsOnACallerThatTakesItsTime: the caller's own time in
// its function is not the stream's silence: a slow fn does not get the
// stream given up under it (and its events sent again on the next).
func TestFollowWaitsOnACallerThatTakesItsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var streams atomic.Int32
		c := New("http://askbridge.invalid", "t", WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			streams.Add(1)
			events := strings.NewReader("id: 1\ndata: {\"seq\":1}\n\nid: 2\ndata: {\"seq\":2}\n\n")
			body := readFunc(func(p []byte) (int, error) {
				if err := r.Context().Err(); err != nil {
					return 0, err // as a transport's body reads once its request is cancelled
				}
				return events.Read(p)
			})
			return &http.Response{StatusCode: http.StatusOK, Request: r, Body: io.NopCloser(body),
				Header: http.Header{"Content-Type": {"text/event-stream"}}}, nil
		})}))
		var seen []int64
		_, err := c.stream(t.Context(), 0, false, func(e Event) error {
			seen = append(seen, e.Seq)
			if e.Seq == 1 {
				time.Sleep(2 * streamIdle) // a slow caller, on the bubble's clock
			}
			return nil
		})
		if err != nil || !slices.Equal(seen, []int64{1, 2}) || streams.Load() != 1 {
			t.Fatalf("a slow caller: %v, saw %v over %d streams; want both events on one", err, seen, streams.Load())
		}
	})
}

// TestFollowWaitsOutRetryAfter: a server that answers a stream with a
// 503 and a Retry-After (its store failing over) is asked again no sooner
// than it said, as Wait asks it. Before, Follow asked again after its own
// quarter of a second, and kept asking through the failover.
func TestFollowWaitsOutRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []time.Time
		c := New("http://askbridge.invalid", "t", WithHTTPClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			asked = append(asked, time.Now())
			if len(asked) == 1 {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Request: r,
					Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"3"}},
					Body:   io.NopCloser(strings.NewReader(`{"error":{"code":"unavailable","message":"the store is failing over"}}`))}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Request: r, Header: http.Header{"Content-Type": {"text/event-stream"}},
				Body: io.NopCloser(strings.NewReader("id: 1\ndata: {\"seq\":1}\n\n"))}, nil
		})}))
		enough := errors.New("seen an event")
		if err := c.Follow(t.Context(), 0, func(Event) error { return enough }); !errors.Is(err, enough) {
			t.Fatalf("follow: %v", err)
		}
		if len(asked) != 2 || asked[1].Sub(asked[0]) < 3*time.Second {
			t.Fatalf("asked at %v; want twice, the second 3s after the 503 or later", asked)
		}
	})
}
