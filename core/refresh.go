package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// A reload may change how an open question's votes count (tally.go): a
// vote cast by someone it took off the route stops counting, and a
// quorum may become one nobody left can reach. Every read shows that
// from the reload on, but a card already posted shows the tally it was
// rendered from until its next edit (a vote, a reminder, an escalation,
// a timeout), hours away, or never if nobody left acts on it. So a
// reload (Reconfigure) sets a sweep going: it queues an edit of every
// card of each open question with a quorum whose tally, as cards word
// it (TallyOf), reads otherwise under the configuration put in force
// than under one in force before it (tallyMoved). The edits go through
// the outbox as every card edit does, and each is rendered when it is
// sent, from the question as read then.
//
// The sweep runs on the ticker (Tick), after its timeouts, one page of
// open questions a tick, so that a reload waits for none of it and the
// next tick's timeouts wait for one page at most. It is bounded per reload: it lists at most
// refreshScanMax open questions and queues the edits of at most
// refreshMax of them; a page the store fails is tried again at the next
// tick, refreshTries times in a row at most. Past any bound the sweep
// stops, and says so (TickReport.RefreshCut, and an error when the
// store failed it): the cards it did not reach show the corrected tally
// at their next edit, as every card did before the sweep existed.
//
// Each replica reads its own copy of the file and sweeps after its own
// reload, so with several replicas a changed card is edited once per
// replica, the last time after every replica runs the new file; a
// replica that has not reloaded yet may render an edit queued by one
// that has, and the later replica's own sweep puts it right. A restart
// does not sweep: the configuration the cards were rendered under is
// not known to the new process.
const (
	refreshPage    = 100  // open questions listed per tick
	refreshScanMax = 5000 // open questions listed per reload
	refreshMax     = 500  // questions whose cards are edited per reload
	refreshTries   = 5    // failed pages in a row before the sweep is dropped
	// refreshOlds is how many configurations a sweep compares with: a
	// reload while one is under way adds the one it replaced, since the
	// cards not yet reached show it, and those reached may show either.
	// Past it, every open question with a quorum is edited.
	refreshOlds = 4
)

// tallyRefresh is the sweep due after a reload, if any.
type tallyRefresh struct {
	// page, scanMax and max are refreshPage, refreshScanMax and
	// refreshMax where zero (a test sets them lower).
	page, scanMax, max int

	mu sync.Mutex
	// olds are the configurations the cards may have been rendered
	// under since the last sweep ended; none when no sweep is due. all
	// is set when there were more than refreshOlds of them.
	olds []*bound
	all  bool
	// gen counts reloads, so that a page begun before a reload does not
	// move on the cursor of the sweep the reload began again.
	gen                       int
	cursor                    string
	listed, refreshed, failed int
	busy                      bool
}

// limits are r's bounds: a page, the listing, the questions edited.
func (r *tallyRefresh) limits() (page, scanMax, max int) {
	page, scanMax, max = refreshPage, refreshScanMax, refreshMax
	if r.page > 0 {
		page, scanMax, max = r.page, r.scanMax, r.max
	}
	return page, scanMax, max
}

// reloaded is told that the configuration prev was replaced: the sweep
// begins, or begins again from the first page with prev among olds.
func (r *tallyRefresh) reloaded(prev *bound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case slices.Contains(r.olds, prev):
	case len(r.olds) < refreshOlds:
		r.olds = append(r.olds, prev)
	default:
		r.all = true
	}
	r.gen++
	r.cursor, r.listed, r.refreshed, r.failed = "", 0, 0, 0
}

// refreshPass is one page's share of the sweep, as taken under the lock.
type refreshPass struct {
	olds      []*bound
	all       bool
	gen       int
	cursor    string
	listed    int
	refreshed int
}

// take hands out the next page of the sweep; false when none is due, or
// another pass has one under way.
func (r *tallyRefresh) take() (refreshPass, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.olds) == 0 || r.busy {
		return refreshPass{}, false
	}
	r.busy = true
	return refreshPass{olds: slices.Clone(r.olds), all: r.all, gen: r.gen, cursor: r.cursor, listed: r.listed, refreshed: r.refreshed}, true
}

// done records how p's page went: listed and refreshed are its own
// counts, short whether it stopped at the bound of questions edited
// before the page's end, next the cursor after it, err its failure (the
// page is then tried again). It reports whether the sweep stopped at a
// bound, and the error to report, if any. A reload since p was taken
// leaves the sweep as the reload began it.
func (r *tallyRefresh) done(p refreshPass, next string, listed, refreshed int, short bool, err error) (cut bool, _ error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy = false
	if r.gen != p.gen {
		return false, err
	}
	if err != nil {
		if r.failed++; r.failed < refreshTries {
			return false, err
		}
		r.end()
		return true, fmt.Errorf("%w; tried %d times, so the cards of the open questions after the first %d listed show the reload's tally at their next edit", err, refreshTries, r.listed)
	}
	r.failed = 0
	r.cursor, r.listed, r.refreshed = next, r.listed+listed, r.refreshed+refreshed
	_, scanMax, _ := r.limits()
	switch {
	case short:
		r.end()
		return true, nil
	case next == "":
		r.end()
	case r.listed >= scanMax:
		r.end()
		return true, nil
	}
	return false, nil
}

// end forgets the sweep: none is due until the next reload.
func (r *tallyRefresh) end() {
	r.olds, r.all = nil, false
	r.cursor, r.listed, r.refreshed, r.failed = "", 0, 0, 0
}

// refreshTallies runs one page of the sweep due after a reload, if any:
// it queues an edit of every card of the questions on the page whose
// tally the reload changed (tallyMoved), and returns how many questions
// that was and whether the sweep stopped at its bound.
func (s *Service) refreshTallies(ctx context.Context) (refreshed int, cut bool, err error) {
	const op = "refresh tallies"
	p, ok := s.tallies.take()
	if !ok {
		return 0, false, nil
	}
	page, scanMax, most := s.tallies.limits()
	qs, next, err := s.store.ListOpen(ctx, p.cursor, min(page, scanMax-p.listed))
	if err != nil {
		cut, err := s.tallies.done(p, "", 0, 0, false, Internal(op, err))
		return 0, cut, err
	}
	olds := make([]*Service, len(p.olds))
	for i, b := range p.olds {
		olds[i] = s.under(b)
	}
	now := s.now()
	var out []Delivery
	short := false
	for _, q := range qs {
		if !s.tallyMoved(q, olds, p.all) {
			continue
		}
		if p.refreshed+refreshed >= most {
			short = true
			break
		}
		refreshed++
		for i := range q.Messages {
			out = append(out, cardUpdate(q, i, refreshKey(q, now, i), now))
		}
	}
	if err := s.store.Enqueue(ctx, out); err != nil {
		cut, err := s.tallies.done(p, "", 0, 0, false, Internal(op, err))
		return 0, cut, err
	}
	cut, err = s.tallies.done(p, next, len(qs), refreshed, short, nil)
	return refreshed, cut, err
}

// tallyMoved reports whether q, open, has cards whose tally may show
// otherwise than it reads under the configuration in force: it reads
// otherwise under one of olds (each a Service over a configuration the
// cards may have been rendered under), or all says to take every
// question with a quorum.
func (s *Service) tallyMoved(q *Question, olds []*Service, all bool) bool {
	if q.Quorum <= 1 || len(q.Messages) == 0 || !q.Open() {
		return false
	}
	if all {
		return true
	}
	now := TallyOf(s.counted(q)).Lines
	for _, o := range olds {
		if !slices.Equal(TallyOf(o.counted(q)).Lines, now) {
			return true
		}
	}
	return false
}

// under is a Service that reads configuration b, with no store: the
// sweep counts votes with it as b counted them (voteCount reads the
// configuration alone).
func (s *Service) under(b *bound) *Service {
	v := &Service{clock: s.clock}
	v.live.Store(b)
	return v
}

// refreshKey is the key of the sweep's edit of card i of q: unique per
// sweep's page and card, apart from the keys of the question's changes
// (UpdateKey).
func refreshKey(q *Question, now time.Time, i int) string {
	return string(q.ID) + "/refresh/" + strconv.FormatInt(q.Version, 10) + "/" + strconv.FormatInt(now.UnixMilli(), 10) + "/" + strconv.Itoa(i+1)
}
