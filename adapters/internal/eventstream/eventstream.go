// Package eventstream sends askbridge's event log as Server-Sent Events,
// for the doors that follow it: the API's /v1/events and the console's
// live page. Each door decides what an event says on its stream and who
// may go on reading it (Options.Still); how the stream starts, catches
// up, follows, keeps alive and ends is here, once.
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
	// began, unless the client had left. A following stream ends, and
	// the client resumes from its Last-Event-ID; one that does not follow
	// is aborted (see cut).
	Failed func(err error)
	// Still says whether the caller still holds what let it in: the door
	// checked its credential once, at the start, but a stream runs for
	// hours, and a token removed by a reload or a session signed out must
	// not go on reading. It is asked after every read of the log and
	// before anything that read would write (events, a keep-alive,
	// "ready"), so nothing that happened after the credential ended is
	// sent; false ends the response there (aborts it, if it does not
	// follow: see cut). A client that reconnects meets the door's check
	// again. Nil: the stream holds for as long as it runs.
	Still func(ctx context.Context) bool
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
	if r.Method == http.MethodHead {
		// GET's status and headers, and nothing more: a response without
		// a body has nothing to stream, and following the log would hold
		// the handler until a write failed.
		return
	}

	st := &stream{ctx: r.Context(), rc: http.NewResponseController(w), bw: bufio.NewWriter(w),
		read: read, since: since, o: o, ready: !o.Ready}
	if o.Retry > 0 {
		_, _ = st.bw.WriteString("retry: " + strconv.FormatInt(o.Retry.Milliseconds(), 10) + "\n\n")
	}
	var tick *time.Ticker
	for {
		if o.Still != nil && !o.Still(st.ctx) {
			st.cut() // the caller's token or session ended: nothing more
			return
		}
		st.write(evs, tick != nil)
		if st.bw.Buffered() > 0 || tick == nil {
			if !st.flush() {
				return
			}
		}
		if len(evs) < Batch { // caught up with the log
			if !o.Follow {
				return
			}
			if tick == nil {
				tick = time.NewTicker(o.Poll)
				defer tick.Stop()
			}
			select {
			case <-st.ctx.Done():
				return
			case <-o.Draining.Done():
				return
			case <-tick.C:
			}
		}
		var ok bool
		if evs, ok = st.next(); !ok {
			st.cut()
			return
		}
	}
}

// stream is one response's stream: where it is in the log and what it
// has written.
type stream struct {
	ctx   context.Context
	rc    *http.ResponseController
	bw    *bufio.Writer
	read  Reader
	since int64 // the seq of the last event sent or skipped
	o     Options
	ready bool // "event: ready" is sent, or not asked for
	// sent is when the stream last sent anything. A keep-alive goes by
	// the time since, not by the passes made: a pass takes as long as
	// its read of the log, and counting each as Poll let a slow store
	// stretch the silence past a proxy's idle timeout.
	sent time.Time
}

// write writes a read's events (or, polling, a keep-alive once nothing
// has been sent for KeepAlive) and, once the log is caught up, "ready".
func (st *stream) write(evs []core.Event, polling bool) {
	switch {
	case len(evs) > 0:
		wrote := false
		for _, e := range evs {
			wrote = st.o.Write(st.bw, e)
			st.since = e.Seq
		}
		if !wrote {
			_, _ = st.bw.WriteString("id: " + strconv.FormatInt(st.since, 10) + "\n\n")
		}
	case polling && time.Since(st.sent) >= st.o.KeepAlive:
		_, _ = st.bw.WriteString(": keep-alive\n\n")
	}
	if !st.ready && len(evs) < Batch {
		st.ready = true
		_, _ = st.bw.WriteString("event: ready\ndata: {}\n\n")
	}
}

// flush sends what is written, each flush with its own write deadline,
// so a server-wide WriteTimeout does not cut a long stream.
func (st *stream) flush() bool {
	now := time.Now()
	_ = st.rc.SetWriteDeadline(now.Add(writeDeadline))
	if st.bw.Flush() != nil || st.rc.Flush() != nil {
		return false
	}
	st.sent = now
	return true
}

// cut ends a stream that stops short of the log's end. One that does not
// follow is aborted (panic(http.ErrAbortHandler): the response never ends
// properly), since its clean end tells the client it has the whole log,
// and "askbridge events" would print part of it and exit 0. A following
// stream's end already means "reconnect", so it just ends.
func (st *stream) cut() {
	if !st.o.Follow {
		panic(http.ErrAbortHandler)
	}
}

// next reads the log after the stream's place; false when the read
// failed (Failed hears of it unless the client left).
func (st *stream) next() ([]core.Event, bool) {
	evs, err := st.read(st.ctx, st.since, Batch)
	if err != nil {
		if st.ctx.Err() == nil && st.o.Failed != nil {
			st.o.Failed(err)
		}
		return nil, false
	}
	return evs, true
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
