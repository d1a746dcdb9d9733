package console

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// streamWriteDeadline bounds each write, so a page that stops reading is
// dropped instead of holding a goroutine.
const streamWriteDeadline = time.Minute

// change is what a page hears of an event: which question changed and
// how. The page fetches the card again; it never trusts the event for
// what the card says.
type change struct {
	QuestionID string         `json:"question_id"`
	Kind       core.EventKind `json:"kind"`
}

// stream sends the page every change after ?since (or after the
// Last-Event-ID a reconnecting EventSource sends, which wins), then a
// "ready" event once it has caught up, then follows the log. The page
// holds its answer controls disabled between a dropped connection and
// the next "ready", so it never offers to answer a card that may be stale.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, _ *session) {
	raw := r.URL.Query().Get("since")
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		raw = last
	}
	since, ok := parseSeq(raw)
	if !ok {
		http.Error(w, "since must be an event seq (a whole number, 0 or more)", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	evs, err := s.svc.Events(ctx, since, 500)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	rc := http.NewResponseController(w)
	bw := bufio.NewWriter(w)
	flush := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteDeadline))
		return bw.Flush() == nil && rc.Flush() == nil
	}
	// A page that loses the stream tries again after a second, not the
	// browser's default three.
	_, _ = bw.WriteString("retry: 1000\n\n")
	ready := false
	tick := time.NewTicker(s.eventPoll)
	defer tick.Stop()
	var idle time.Duration
	for {
		for _, e := range evs {
			if e.QuestionID == "" || e.Kind == core.EventRefused {
				since = e.Seq // nothing on a card changes
				continue
			}
			data, _ := json.Marshal(change{QuestionID: e.QuestionID, Kind: e.Kind})
			_, _ = bw.WriteString("id: " + strconv.FormatInt(e.Seq, 10) + "\nevent: change\ndata: ")
			_, _ = bw.Write(data)
			_, _ = bw.WriteString("\n\n")
			since = e.Seq
		}
		if len(evs) > 0 {
			idle = 0
			// Refused events move since without a message; an id line
			// alone moves the page's Last-Event-ID past them too.
			_, _ = bw.WriteString("id: " + strconv.FormatInt(since, 10) + "\n\n")
		}
		if len(evs) < 500 && !ready {
			ready = true
			_, _ = bw.WriteString("event: ready\ndata: {}\n\n")
		}
		if !flush() {
			return
		}
		if len(evs) == 500 {
			if evs, err = s.svc.Events(ctx, since, 500); err != nil {
				s.streamFailed(r, err)
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-s.draining.Done():
			return
		case <-tick.C:
		}
		if evs, err = s.svc.Events(ctx, since, 500); err != nil {
			s.streamFailed(r, err)
			return
		}
		if len(evs) == 0 {
			if idle += s.eventPoll; idle >= s.keepAlive {
				idle = 0
				_, _ = bw.WriteString(": keep-alive\n\n")
			}
		}
	}
}

func (s *Server) streamFailed(r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	s.log.Error().Err(err).Msg("console stream: reading the log failed")
}

// parseSeq reads an event seq; "" is 0.
func parseSeq(raw string) (int64, bool) {
	if raw == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	return n, err == nil && n >= 0
}
