package ntfy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/actionlink"
	"github.com/askbridge/askbridge/adapters/internal/textlimit"
)

// The ntfy app sends an http button's request itself and, when the
// answer is not a 2xx, marks the button failed with only "HTTP <status>"
// (ntfy-android's UserActionWorker): the page askbridge answers with is
// never shown. So a tap that recorded nothing (closed already, refused,
// askbridge unable to record it just now) is told why in a notification
// of its own, on the topic the link was sent to. A browser, which shows
// the page, gets none.

// tapNoteGap is how long after one such notification to a topic the
// next waits; one that comes sooner is not published (the tapper still
// sees the status). It keeps a burst of refused taps, or someone
// replaying a link, from spending the server's publishing budget, which
// the questions' own notifications need.
const tapNoteGap = 5 * time.Second

// tapNoteWait bounds the publish, made before the tap is answered: the
// app waits for the answer for 15 s.
const tapNoteWait = 5 * time.Second

// tapNotes remembers when each topic was last told of a refused tap.
type tapNotes struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// take reports whether topic may be told now, and if so holds it, as
// told now, while the notification is published: taps at once publish
// one between them, and the map stays bounded. release gives the hold
// back (the topic as it was before) when the publish failed, so that a
// notification nobody got holds off none after it.
func (t *tapNotes) take(topic string, now time.Time) (release func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last == nil || len(t.last) > 4096 {
		t.last = map[string]time.Time{}
	}
	before, told := t.last[topic]
	if told && now.Sub(before) < tapNoteGap {
		return nil, false
	}
	t.last[topic] = now
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if at, held := t.last[topic]; !held || !at.Equal(now) {
			return // the map was cleared, or another has taken it since
		}
		if told {
			t.last[topic] = before
		} else {
			delete(t.last, topic)
		}
	}, true
}

// tellTapper publishes what the page said of a refused POST of link c
// to c's topic, unless a browser sent it (it asked for HTML, and shows
// the page).
func (a *Adapter) tellTapper(r *http.Request, c actionlink.Claims, n actionlink.Note) {
	if strings.Contains(r.Header.Get("Accept"), "text/html") || c.To == "" {
		return
	}
	release, ok := a.notes.take(c.To, a.page.Clock())
	if !ok {
		a.log.Debug().Msg("ntfy: a refused tap's notification skipped: one was just sent to the topic, or is being sent")
		return
	}
	msg := n.Message
	if q := strings.TrimSpace(n.Question); q != "" {
		msg += "\n\n" + cut(q, 600)
	}
	p := Publication{Topic: c.To, Title: textlimit.Runes.Cut(textlimit.OneLine(n.Title), maxTitle),
		Message: textlimit.Bytes.Cut(textlimit.Clean(msg), MaxMessage), Tags: []string{"warning"}, Priority: 3}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), tapNoteWait)
	defer cancel()
	if _, err := a.publish(ctx, p); err != nil {
		release()
		a.log.Warn().Err(err).Msg("ntfy: a refused tap's notification was not published")
	}
}
