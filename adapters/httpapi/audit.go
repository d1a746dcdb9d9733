package httpapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/askbridge/askbridge/core"
)

// exportPage is how many events the export reads at a time (the most
// core's Events hands out).
const exportPage = 1000

// auditExport streams the event log after ?since (0: from the start) as
// NDJSON, one event a line with its audit chain (core/audit), oldest
// first, and ends when it reaches the end of the log. An export taken
// with since set to the last seq of an earlier one continues it: its
// first event links to the earlier one's last (or to the checkpoint of
// a purge between them), so `askbridge audit verify earlier later`
// checks both as one log. Admin only: the log names who did what, by
// pseudonym.
func (s *Server) auditExport(w http.ResponseWriter, r *http.Request) {
	var since int64
	if raw := r.URL.Query().Get("since"); raw != "" {
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || v < 0 {
			s.fail(w, r, invalid("since %q must be an event seq (a whole number, 0 or more)", raw))
			return
		}
		since = v
	}
	// The first read happens before the headers go out, so that a store
	// failure is still a proper 500.
	evs, err := s.svc.Events(r.Context(), since, exportPage)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		// The status is known; the rest of the log would only be read
		// into a response whose body goes nowhere.
		return
	}
	bw := bufio.NewWriter(w)
	flusher, _ := w.(http.Flusher)
	for {
		for _, e := range evs {
			if err := writeLine(bw, e); err != nil {
				return
			}
			since = e.Seq
		}
		if bw.Flush() != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if len(evs) < exportPage {
			return
		}
		if evs, err = s.svc.Events(r.Context(), since, exportPage); err != nil {
			// The status has gone out: the download is aborted (the
			// response never ends properly), so curl and the client fail
			// rather than keep a short file that reads as the whole log,
			// and the log says why.
			s.log.Error().Err(err).Int64("after", since).Msg("audit export: reading the log failed")
			panic(http.ErrAbortHandler)
		}
	}
}

// writeLine writes one event as a line of JSON.
func writeLine(w *bufio.Writer, e core.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
