package console

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// inboxPage is how many rows one inbox page shows; the rest are a link
// away, paged by the store.
const inboxPage = 50

// inbox is one page of the open questions the URL's filters match, in the
// API's order, as folded rows; without a session it is the sign-in form.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) {
	sess, err := s.current(w, r)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if sess == nil {
		s.signInPage(w, r, http.StatusOK, "", r.URL.RequestURI()) // back to these filters and this page
		return
	}
	query := r.URL.Query()
	f, err := parseFilters(query)
	from := 1
	if err == nil && query.Get("from") != "" {
		if from, err = strconv.Atoi(query.Get("from")); err != nil || from < 1 {
			err = fmt.Errorf("from %q is not a row number (1 or more)", query.Get("from"))
		}
	}
	if err != nil {
		s.render(w, r, http.StatusBadRequest, "problem", s.page(sess, map[string]any{"Status": "Bad filter", "Message": err.Error()}))
		return
	}
	ctx := r.Context()
	after := query.Get("after")
	p, since, err := s.listed(ctx, f.open(), after)
	if core.ErrorCode(err) == core.CodeInvalid {
		s.render(w, r, http.StatusBadRequest, "problem", s.page(sess, map[string]any{"Status": "Bad filter", "Message": core.ErrorMessage(err)}))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	v := sess.viewer()
	rows := make([]cardView, 0, len(p.Questions))
	for _, q := range p.Questions {
		c := s.cardOf(q, v)
		c.Src = rowSrc(q.ID, f.Query())
		rows = append(rows, c)
	}
	// The title leads with the count, so that a tab in the background
	// shows what is open (console.js keeps it current).
	data := map[string]any{"Title": strconv.Itoa(p.Total) + " open", "Rows": rows, "Filters": f, "Total": p.Total, "Stream": streamURL(since),
		"From": from, "To": from + len(rows) - 1, "Paged": after != ""}
	if p.Next != "" {
		data["Next"] = pageURL(f, p.Next, from+len(rows))
	}
	if after != "" {
		data["First"] = pageURL(f, "", 0)
	}
	if !sess.Away.IsZero() {
		// The banner is what was asked of this account: the questions it
		// may act on, by the check its answers would pass (the digest's
		// Decider, as cardOf's MayAnswer). An observer may act on none.
		if sess.account.Role.MayAnswer() {
			me := v.decider()
			d, err := s.svc.Digest(ctx, core.DigestQuery{From: sess.Away, To: s.now(), Decider: &me})
			if err == nil {
				data["Away"] = d
			} else if core.ErrorCode(err) != core.CodeInvalid {
				s.internal(w, r, err)
				return
			}
		}
		sess.Away = time.Time{} // shown once
		if live, err := s.keep(ctx, sess); err != nil {
			s.internal(w, r, err)
			return
		} else if !live { // signed out while this page was being made
			unrenew(w)
			s.signInPage(w, r, http.StatusOK, "", r.URL.RequestURI())
			return
		}
	}
	s.render(w, r, http.StatusOK, "inbox", s.page(sess, data))
}

// pageURL links an inbox page: the filters, and where the page starts.
func pageURL(f filters, after string, from int) string {
	v, _ := url.ParseQuery(f.Query()) // Query encodes what ParseQuery reads
	if after != "" {
		v.Set("after", after)
		v.Set("from", strconv.Itoa(from))
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// rowSrc is where an inbox row is fetched again, under the page's filters.
func rowSrc(id core.QuestionID, query string) string {
	src := "/rows/" + url.PathEscape(string(id))
	if query != "" {
		src += "?" + query
	}
	return src
}

// row is one inbox row alone, for the page to swap in when its question
// changes; like card, 204 when the filters leave it out.
func (s *Server) row(w http.ResponseWriter, r *http.Request, sess *session) {
	f, err := parseFilters(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q, err := s.svc.Get(r.Context(), questionID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !f.match(q) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c := s.cardOf(q, sess.viewer())
	c.Src = rowSrc(q.ID, f.Query())
	s.render(w, r, http.StatusOK, "row", c)
}

// listTries bounds how often listed lists again because the log moved
// while it listed.
const listTries = 4

// listed is one page of the open questions f matches, and the seq of the
// log's tail it stands at, where the page's stream starts: every event up
// to it had happened when the questions were listed, and none after it.
// The page counts what its stream tells as news (tally.js): a question
// it hears asked was not in the count, and one it hears close, unheard
// of till then, was. A tail read only before the listing lets a
// transition land between the two, which the count holds and the stream
// tells again: an ask counted twice, or a question closed as it was
// asked taken off a count that never held it. So the tail is read on
// both sides, and the page listed again while the log moved between, a
// few times at most: under a log that never rests, the last listing goes
// out with the tail before it, as every page once did, whose stream
// misses nothing though its count may be one out. (On Redis with several
// shards the log shows an event only once every shard has caught up with
// it, so there a transition may still slip between.)
func (s *Server) listed(ctx context.Context, f core.OpenFilter, after string) (core.OpenPage, int64, error) {
	since, err := s.logTail(ctx)
	if err != nil {
		return core.OpenPage{}, 0, err
	}
	for try := 1; ; try++ {
		p, err := s.svc.OpenPage(ctx, f, after, inboxPage)
		if err != nil {
			return core.OpenPage{}, 0, err
		}
		tail, err := s.logTail(ctx)
		if err != nil {
			return core.OpenPage{}, 0, err
		}
		if tail == since || try == listTries {
			return p, since, nil
		}
		since = tail
	}
}

// logBatch is the most events one read of the log hands out (core caps
// Service.Events and Service.QuestionEvents there).
const logBatch = 1000

// logTail is the seq of the latest event. It reads on from the last tail
// it found; when that read is full (a replica's first page, or a burst
// since the last), the log goes on, and rather than read it to the end
// a batch at a time (a whole retained log, on a replica's first page) it
// looks for the end by seq alone: reads of one event each, doubling the
// step past the last event seen until a read finds none, then halving
// the gap between. That is some dozens of one-event reads however long
// the log, since seqs only grow.
func (s *Server) logTail(ctx context.Context) (int64, error) {
	s.tailMu.Lock()
	defer s.tailMu.Unlock()
	evs, err := s.svc.Events(ctx, s.tail, logBatch)
	if err != nil {
		return 0, err
	}
	if len(evs) > 0 {
		s.tail = evs[len(evs)-1].Seq
	}
	if len(evs) < logBatch {
		return s.tail, nil
	}
	// From here on lo is the seq of an event the log holds, and hi one
	// no event is past (the first probe that found none).
	lo, hi := s.tail, int64(0)
	for step := int64(logBatch); ; {
		probe := lo + min(step, math.MaxInt64-lo)
		next, err := s.svc.Events(ctx, probe, 1)
		if err != nil {
			return 0, err
		}
		if len(next) == 0 {
			hi = probe
			break
		}
		lo = next[0].Seq
		if step < math.MaxInt64/2 {
			step *= 2
		}
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		next, err := s.svc.Events(ctx, mid, 1)
		if err != nil {
			return 0, err
		}
		if len(next) == 0 {
			hi = mid
		} else {
			lo = next[0].Seq
		}
	}
	s.tail = lo
	return s.tail, nil
}

// page adds what the layout needs to a page's data.
func (s *Server) page(sess *session, data map[string]any) map[string]any {
	data["Viewer"] = sess.viewer()
	return data
}

// notFoundPage is the one answer for an unknown path, an unknown question
// and a malformed id alike (law 6): the same bytes, whoever asks.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusNotFound, "problem", map[string]any{"Status": "Not found", "Message": "There is no such page or question."})
}

func (s *Server) forbidden(w http.ResponseWriter, r *http.Request, msg string) {
	s.render(w, r, http.StatusForbidden, "problem", map[string]any{"Status": "Refused", "Message": msg})
}

func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error().Err(err).Str("method", r.Method).Str("path", r.URL.Path).Msg("console: internal error")
	s.render(w, r, http.StatusInternalServerError, "problem", map[string]any{"Status": "Something went wrong",
		"Message": "askbridge could not do that just now; please try again."})
}

// fail answers a read that core refused: an unknown question is the one
// 404 page; anything else is internal.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if core.ErrorCode(err) == core.CodeNotFound {
		s.notFound(w, r)
		return
	}
	s.internal(w, r, err)
}

// render executes a template into a buffer first, so a failure is a clean
// 500 rather than half a page; the page goes out gzipped to a client that
// takes it.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.log.Error().Err(err).Str("template", name).Msg("console: render failed")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Add("Vary", "Accept-Encoding")
	page := buf.Bytes()
	if acceptsGzip(r) {
		page = compressed(page)
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(status)
	_, _ = w.Write(page)
}

func streamURL(since int64) string { return "/stream?since=" + strconv.FormatInt(since, 10) }
