package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/askbridge/askbridge/adapters/internal/eventstream"
	"github.com/askbridge/askbridge/core"
)

// events streams the event log as Server-Sent Events: "id:" is the
// event's seq, "event:" its kind, "data:" the event as JSON. It starts
// after ?since (or after the Last-Event-ID header, which a reconnecting
// EventSource sends and which wins), writes what the log holds, flushing
// after each batch, and then follows the log until the client goes away.
//
// Following re-reads the log every eventPoll (250ms): unlike a wait, which
// the store wakes, the stream polls, since the log has no wake-up of its
// own. ?follow=false returns what exists and ends the response.
//
// The token is checked again before every write (eventstream's Still):
// a reload that removes it, renews its secret or takes away a role that
// may read events ends the stream before it carries anything more.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	since, what, ok := eventstream.Since(r)
	if !ok {
		s.fail(w, r, invalid("%s must be an event seq (a whole number, 0 or more)", what))
		return
	}
	follow := true
	if raw := r.URL.Query().Get("follow"); raw != "" {
		var err error
		if follow, err = strconv.ParseBool(raw); err != nil {
			s.fail(w, r, invalid("follow %q must be true or false", raw))
			return
		}
	}
	// The first read happens before the headers go out, so that a store
	// failure is still a proper 500.
	evs, err := s.svc.Events(r.Context(), since, eventstream.Batch)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	eventstream.Serve(w, r, s.svc.Events, since, evs, eventstream.Options{
		Follow: follow, Poll: s.eventPoll, KeepAlive: s.keepAlive, Draining: s.draining,
		Write: writeEvent,
		Still: s.stillHolds(r),
		Failed: func(err error) {
			s.log.Error().Err(err).Str("path", r.URL.Path).Msg("events stream: reading the log failed")
		},
	})
}

// writeEvent writes one event whole: the API's stream leaves none out.
func writeEvent(w *bufio.Writer, e core.Event) bool {
	data, err := json.Marshal(e)
	if err != nil {
		return false // an event is plain data and always encodes
	}
	_, _ = w.WriteString("id: " + strconv.FormatInt(e.Seq, 10) + "\nevent: " + string(e.Kind) + "\ndata: ")
	_, _ = w.Write(data)
	_, _ = w.WriteString("\n\n")
	return true
}
