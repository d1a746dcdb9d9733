package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// eventBatch is how many events one read of the log takes.
const eventBatch = 500

// eventWriteDeadline bounds each write of the stream, so a client that
// stops reading is dropped instead of holding a goroutine forever.
const eventWriteDeadline = time.Minute

// events streams the event log as Server-Sent Events: "id:" is the
// event's seq, "event:" its kind, "data:" the event as JSON. It starts
// after ?since (or after the Last-Event-ID header, which a reconnecting
// EventSource sends and which wins), writes what the log holds, flushing
// after each batch, and then follows the log until the client goes away.
//
// Following re-reads the log every eventPoll (250ms): unlike a wait, which
// the store wakes, the stream polls, since the log has no wake-up of its
// own. ?follow=false returns what exists and ends the response.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	since, err := eventsSince(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	follow := true
	if raw := r.URL.Query().Get("follow"); raw != "" {
		if follow, err = strconv.ParseBool(raw); err != nil {
			s.fail(w, r, invalid("follow %q must be true or false", raw))
			return
		}
	}
	ctx := r.Context()
	// The first read happens before the headers go out, so that a store
	// failure is still a proper 500.
	evs, err := s.svc.Events(ctx, since, eventBatch)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // tell nginx not to hold the stream back
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)

	rc := http.NewResponseController(w)
	bw := bufio.NewWriter(w)
	// Each batch gets its own write deadline, so a server-wide
	// WriteTimeout does not cut a long stream.
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(eventWriteDeadline)) }
	flush := func() bool { return bw.Flush() == nil && rc.Flush() == nil }
	var tick *time.Ticker
	var idle time.Duration
	for {
		for len(evs) > 0 {
			deadline()
			for _, e := range evs {
				writeEvent(bw, e)
			}
			since = evs[len(evs)-1].Seq
			if !flush() {
				return
			}
			if len(evs) < eventBatch {
				break
			}
			if evs, err = s.svc.Events(ctx, since, eventBatch); err != nil {
				s.streamFailed(r, err)
				return
			}
		}
		if !follow {
			_ = flush()
			return
		}
		if tick == nil {
			deadline()
			_ = flush() // the headers, when the log had nothing yet
			tick = time.NewTicker(s.eventPoll)
			defer tick.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-s.draining.Done():
			return // the client reconnects with its Last-Event-ID
		case <-tick.C:
		}
		if evs, err = s.svc.Events(ctx, since, eventBatch); err != nil {
			s.streamFailed(r, err)
			return
		}
		if len(evs) > 0 {
			idle = 0
			continue
		}
		if idle += s.eventPoll; idle >= s.keepAlive {
			idle = 0
			deadline()
			_, _ = bw.WriteString(": keep-alive\n\n")
			if !flush() {
				return
			}
		}
	}
}

// streamFailed logs a read of the log that failed after the stream began.
// The response just ends; the client resumes from its Last-Event-ID.
func (s *Server) streamFailed(r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client left; the read was cancelled with it
	}
	s.log.Error().Err(err).Str("path", r.URL.Path).Msg("events stream: reading the log failed")
}

func writeEvent(w *bufio.Writer, e core.Event) {
	data, err := json.Marshal(e)
	if err != nil {
		return // an event is plain data and always encodes
	}
	_, _ = w.WriteString("id: " + strconv.FormatInt(e.Seq, 10) + "\nevent: " + string(e.Kind) + "\ndata: ")
	_, _ = w.Write(data)
	_, _ = w.WriteString("\n\n")
}

// eventsSince is where a stream starts: after Last-Event-ID if the client
// sent one, else after ?since, else from the beginning.
func eventsSince(r *http.Request) (int64, error) {
	if raw := r.Header.Get("Last-Event-ID"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			return 0, invalid("the Last-Event-ID header %q must be an event seq (a whole number, 0 or more)", raw)
		}
		return n, nil
	}
	if raw := r.URL.Query().Get("since"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			return 0, invalid("since %q must be an event seq (a whole number, 0 or more)", raw)
		}
		return n, nil
	}
	return 0, nil
}
