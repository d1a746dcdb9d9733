package console

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/eventstream"
	"github.com/askbridge/askbridge/core"
)

// change is what a page hears of an event: which question changed and
// how. The page fetches the card again; it never trusts the event for
// what the card says.
type change struct {
	QuestionID core.QuestionID `json:"question_id"`
	Kind       core.EventKind  `json:"kind"`
}

// stream sends the page every change after ?since (or after the
// Last-Event-ID a reconnecting EventSource sends, which wins), then a
// "ready" event once it has caught up, then follows the log. The page
// pauses sending answers between a dropped connection and the next
// "ready" (stream.js), so it never sends an answer from a card that may
// be stale.
// The session is read again before every write (eventstream's Still): a
// stream ends with its session (sign-out, idle expiry, maximum age, its
// token removed or renewed) and tells nothing that happened after.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sess *session) {
	since, _, ok := eventstream.Since(r)
	if !ok {
		http.Error(w, "since must be an event seq (a whole number, 0 or more)", http.StatusBadRequest)
		return
	}
	evs, err := s.svc.Events(r.Context(), since, eventstream.Batch)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	eventstream.Serve(w, r, s.svc.Events, since, evs, eventstream.Options{
		Follow: true, Poll: s.eventPoll, KeepAlive: s.keepAlive, Draining: s.draining,
		// A page that loses the stream tries again after a second, not
		// the browser's default three.
		Retry: time.Second,
		Ready: true,
		Write: writeChange,
		Still: s.stillLive(sess),
		Failed: func(err error) {
			s.log.Error().Err(err).Msg("console stream: reading the log failed")
		},
	})
}

// writeChange tells the page which card to fetch again; events that
// change nothing on a card (refusals, events of no question) say nothing.
func writeChange(w *bufio.Writer, e core.Event) bool {
	if e.QuestionID == "" || e.Kind == core.EventRefused {
		return false
	}
	data, _ := json.Marshal(change{QuestionID: e.QuestionID, Kind: e.Kind})
	_, _ = w.WriteString("id: " + strconv.FormatInt(e.Seq, 10) + "\nevent: change\ndata: ")
	_, _ = w.Write(data)
	_, _ = w.WriteString("\n\n")
	return true
}

// streamCheck is how often a live page proves that its event stream still
// reaches the console, and how long it gives the proof (stream.js). A
// network that drops without a word closes nothing, and the server's
// keep-alives are comments a page never hears, so without it a page
// would go on offering stale cards as current for as long as the drop
// lasts. The page opens the stream afresh, from its last event, this
// often; one that has not said "ready" within it is lost, and the page
// says so. The page's backoff between tries is measured in it too (1 s
// to 30 s at 20 s). A var so that a test may shorten it, and with it
// the backoff.
var streamCheck = 20 * time.Second
