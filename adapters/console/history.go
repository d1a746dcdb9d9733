package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core"
)

// historyPage is how many events one page of a question's history shows;
// the rest are a plain link away, so a question refused thousands of
// times pages rather than floods, and none of its events is out of reach.
const historyPage = 500

// historyScan bounds, in reads of logBatch events, how far one history
// page reads the log past the question's first logBatch events (see
// laterEvents). A variable so that a test can make the bound bite.
var historyScan = 10

// historyView is a question's page: its card, one page of its event
// history with where that page sits in the whole, and, once closed, the
// resume the agent got.
type historyView struct {
	Card   cardView
	Events []core.Event
	Pages  historyPages
	Resume string
	// Src is where the page fetches this part again when the question
	// changes: this page of the history, not the first.
	Src string
}

// historyPages says which of the question's events a page shows and how
// many there are, so that nothing is left out unsaid.
type historyPages struct {
	From, To int // the shown events' places in the history, from 1; To < From when none is shown
	Total    int // how many events the question has, as far as this read saw
	// Whole is set when the read reached the end of the question's
	// events (its index, or the log), so Total is all of them.
	Whole bool
	// First is the first page's address, when this is a later one.
	First string
	// Next is the later events' address; "" when this page has the
	// newest.
	Next string
	// SearchedTo is set when the read stopped at its bound with the page
	// not full: the time of the last event of the log it read, which is
	// where Next goes on from.
	SearchedTo time.Time
}

// Paged reports whether the page says where it sits: anything is left
// out, or this is not the first page.
func (p historyPages) Paged() bool {
	return p.Next != "" || p.First != "" || !p.Whole || p.To-p.From+1 != p.Total
}

// historyCursor is where a page of the history starts: after the event
// (of the log) at seq After, at the question's event number From.
type historyCursor struct {
	After int64
	From  int
}

// parseHistoryCursor reads a page's place from the URL; none is the
// first page.
func parseHistoryCursor(v url.Values) (historyCursor, error) {
	c := historyCursor{From: 1}
	after, from := v.Get("after"), v.Get("n")
	if after == "" && from == "" {
		return c, nil
	}
	var err1, err2 error
	c.After, err1 = strconv.ParseInt(after, 10, 64)
	c.From, err2 = strconv.Atoi(from)
	if err1 != nil || err2 != nil || c.After < 0 || c.From < 1 {
		return c, fmt.Errorf("after %q and n %q are not a place in a question's history", after, from)
	}
	return c, nil
}

// query is the cursor as the page's links carry it.
func (c historyCursor) query() string {
	return url.Values{"after": {strconv.FormatInt(c.After, 10)}, "n": {strconv.Itoa(c.From)}}.Encode()
}

// historyEvents reads one page of a question's events from c. Core
// hands out a question's first logBatch events through the store's
// index of them, and no more; events past those are found by reading
// the log on from the last of them, at most historyScan batches a page.
// Reading one event past the page tells whether more follow; a read
// that reaches the log's end knows how many there are in all.
func (s *Server) historyEvents(ctx context.Context, id core.QuestionID, c historyCursor) ([]core.Event, historyPages, error) {
	indexed, err := s.svc.QuestionEvents(ctx, id, logBatch)
	if err != nil {
		return nil, historyPages{}, err
	}
	var shown []core.Event
	seen := 0 // the question's events after c.After read so far
	take := func(e core.Event) {
		seen++
		if len(shown) < historyPage {
			shown = append(shown, e)
		}
	}
	for _, e := range indexed {
		if e.Seq > c.After {
			take(e)
		}
	}
	whole := len(indexed) < logBatch
	since, searched := c.After, time.Time{}
	if !whole && seen <= historyPage {
		since = max(since, indexed[len(indexed)-1].Seq)
		for range historyScan {
			evs, err := s.svc.Events(ctx, since, logBatch)
			if err != nil {
				return nil, historyPages{}, err
			}
			for _, e := range evs {
				if e.QuestionID == id {
					take(e)
				}
			}
			if len(evs) > 0 {
				since, searched = evs[len(evs)-1].Seq, evs[len(evs)-1].At
			}
			if len(evs) < logBatch {
				whole = true
				break
			}
			if seen > historyPage {
				break
			}
		}
	}
	p := historyPages{From: c.From, To: c.From + len(shown) - 1, Total: c.From - 1 + seen, Whole: whole}
	base := "/q/" + url.PathEscape(string(id))
	if c.After > 0 {
		p.First = base
	}
	switch {
	case seen > len(shown): // the next page starts after this one's last
		p.Next = base + "?" + historyCursor{After: shown[len(shown)-1].Seq, From: p.To + 1}.query()
	case !whole: // the read stopped at its bound: on from where it got to
		p.Next = base + "?" + historyCursor{After: since, From: p.To + 1}.query()
		p.SearchedTo = searched
	}
	return shown, p, nil
}

func (s *Server) history(ctx context.Context, sess *session, id core.QuestionID, c historyCursor) (historyView, error) {
	q, err := s.svc.Get(ctx, id)
	if err != nil {
		return historyView{}, err
	}
	evs, pages, err := s.historyEvents(ctx, q.ID, c)
	if err != nil {
		return historyView{}, err
	}
	h := historyView{Card: s.cardOf(q, sess.viewer()), Events: evs, Pages: pages,
		Src: "/q/" + url.PathEscape(string(q.ID)) + "/part"}
	if pages.First != "" {
		h.Src += "?" + c.query()
	}
	if !q.Open() {
		res, err := core.ResumeOf(q)
		if err != nil {
			return historyView{}, err
		}
		h.Resume = res.Text
	}
	return h, nil
}

func (s *Server) question(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := parseHistoryCursor(r.URL.Query())
	if err != nil {
		s.render(w, r, http.StatusBadRequest, "problem", s.page(sess, map[string]any{"Status": "Bad link", "Message": err.Error()}))
		return
	}
	since, err := s.logTail(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	h, err := s.history(r.Context(), sess, questionID(r), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "question", s.page(sess, map[string]any{"H": h, "Stream": streamURL(since), "Title": h.Card.FirstLine}))
}

// questionPart is the changing part of a question's page, for the page to
// swap in when the question changes. It is the part with its wrapper (the
// element that names the question and where to fetch it again), since the
// page swaps what it gets in whole: without it, the next change would find
// nothing on the page to fetch.
func (s *Server) questionPart(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := parseHistoryCursor(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h, err := s.history(r.Context(), sess, questionID(r), c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "question-part", h)
}
