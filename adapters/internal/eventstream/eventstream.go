// Package eventstream sends askbridge's event log as Server-Sent Events,
// for the doors that follow it: the API's /v1/events and the console's
// live page. Each door decides what an event says on its stream; how the
// stream starts, catches up, follows, keeps alive and ends is here, once.
package eventstream

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Batch is how many events one read of the log takes.
const Batch = 500

// writeDeadline bounds each write, so a client that stops reading is
// dropped instead of holding a goroutine.
const writeDeadline = time.Minute

// Reader reads the log: events after seq since, at most limit of them.
type Reader func(ctx context.Context, since int64, limit int) ([]core.Event, error)

// Options configure Serve.
type Options struct {
	// Follow keeps the stream open after the log's end, re-reading it
	// every Poll and sending a comment after KeepAlive of silence, so
	// proxies do not close it. The log has no wake-up of its own, unlike
	// a question, which is why a stream polls.
	Follow    bool
	Poll      time.Duration
	KeepAlive time.Duration
	// Draining ends a following stream once it is done; the client
	// reconnects with its Last-Event-ID, on another replica if need be.
	Draining context.Context
	// Retry, when set, is the reconnection delay the client is told first.
	Retry time.Duration
	// Ready sends "event: ready" once the stream has caught up with the
	// log, so a page knows when what it shows is current.
	Ready bool
	// Write writes one event and reports whether it wrote anything. An
	// event it skips still moves the stream past it: an "id:" line tells
	// the client so.
	Write func(w *bufio.Writer, e core.Event) bool
	// Failed hears of a read of the log that failed after the stream
	// began, unless the client had left. The response ends, and the
	// client resumes from its Last-Event-ID.
	Failed func(err error)
}

// Serve writes the stream to w: evs, the caller's first read of the log
// after since (made before any header went out, so that a failure could
// still be an error response of the caller's own), then what follows.
func Serve(w http.ResponseWriter, r *http.Request, read Reader, since int64, evs []core.Event, o Options) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // tell nginx not to hold the stream back
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)

	ctx := r.Context()
	rc := http.NewResponseController(w)
	bw := bufio.NewWriter(w)
	// Each flush gets its own write deadline, so a server-wide
	// WriteTimeout does not cut a long stream.
	flush := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(writeDeadline))
		return bw.Flush() == nil && rc.Flush() == nil
	}
	next := func() bool {
		var err error
		if evs, err = read(ctx, since, Batch); err != nil {
			if ctx.Err() == nil && o.Failed != nil {
				o.Failed(err)
			}
			return false
		}
		return true
	}
	if o.Retry > 0 {
		_, _ = bw.WriteString("retry: " + strconv.FormatInt(o.Retry.Milliseconds(), 10) + "\n\n")
	}
	ready := !o.Ready
	var tick *time.Ticker
	var idle time.Duration
	for {
		if len(evs) > 0 {
			idle = 0
			wrote := false
			for _, e := range evs {
				wrote = o.Write(bw, e)
				since = e.Seq
			}
			if !wrote {
				_, _ = bw.WriteString("id: " + strconv.FormatInt(since, 10) + "\n\n")
			}
		} else if tick != nil {
			if idle += o.Poll; idle >= o.KeepAlive {
				idle = 0
				_, _ = bw.WriteString(": keep-alive\n\n")
			}
		}
		if !ready && len(evs) < Batch {
			ready = true
			_, _ = bw.WriteString("event: ready\ndata: {}\n\n")
		}
		if bw.Buffered() > 0 || tick == nil {
			if !flush() {
				return
			}
		}
		if len(evs) == Batch {
			if !next() {
				return
			}
			continue
		}
		if !o.Follow {
			return
		}
		if tick == nil {
			tick = time.NewTicker(o.Poll)
			defer tick.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-o.Draining.Done():
			return
		case <-tick.C:
		}
		if !next() {
			return
		}
	}
}

// Since is where a stream starts: after the Last-Event-ID that a
// reconnecting EventSource sends, which wins, else after ?since, else from
// the start. When the one given is not an event seq, ok is false and what
// names it ("the Last-Event-ID header "x"", "since "x"").
func Since(r *http.Request) (since int64, what string, ok bool) {
	if raw := r.Header.Get("Last-Event-ID"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		return n, "the Last-Event-ID header " + strconv.Quote(raw), err == nil && n >= 0
	}
	if raw := r.URL.Query().Get("since"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		return n, "since " + strconv.Quote(raw), err == nil && n >= 0
	}
	return 0, "", true
}
