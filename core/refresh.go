package core

import (
	"context"
	"errors"
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
// change of the configuration, at a reload or between a stop and a
// start, sets a sweep going: it queues an edit of every card of each
// open question with a quorum whose tally, as cards word it (TallyOf),
// reads otherwise under the configuration put in force than under one
// the cards may have been drawn under (tallyMoved), or of every such
// question when those are not known here (a start: only the digest of
// the one before is kept). The edits go through the outbox as every
// card edit does, and each is rendered when it is sent, from the
// question as read then.
//
// The sweep is shared by the replicas, and runs once across them
// (refreshshared.go): the store records which configuration the cards
// are drawn under and whether a sweep is owed, and a replica still
// running another configuration holds the sweep off, since an edit it
// renders would show its tally.
//
// The sweep runs on the ticker (Tick), after its timeouts, one page of
// open questions a tick, so that a reload waits for none of it and the
// next tick's timeouts wait for one page at most. It is bounded per
// sweep: it lists at most refreshScanMax open questions and queues the
// edits of at most refreshMax of them; a page the store fails is tried
// again at the next tick, refreshTries times in a row at most. Past any
// bound the sweep stops, and says so (TickReport.RefreshCut, and an
// error when the store failed it): the cards it did not reach show the
// corrected tally at their next edit, as every card did before the
// sweep existed.
const (
	refreshPage    = 100  // open questions listed per tick
	refreshScanMax = 5000 // open questions listed per sweep
	refreshMax     = 500  // questions whose cards are edited per sweep
	refreshTries   = 5    // failed pages in a row before the sweep is dropped
	// refreshOlds is how many configurations a sweep compares with: a
	// change while one is owed adds the one it replaced, since the
	// cards not yet reached show it, and those reached may show either.
	// Past it, every open question with a quorum is edited.
	refreshOlds = 4
)

// tallyRefresh is this replica's part in the sweep of cards.
type tallyRefresh struct {
	// page, scanMax and max are refreshPage, refreshScanMax and
	// refreshMax where zero (a test sets them lower).
	page, scanMax, max int
	// replica names this Service as the holder of the sweep's lease.
	replica string
	// running keeps this replica to one pass at a time.
	running sync.Mutex
	// told is the debt of the cards' record (cardsRecord.debt) this
	// replica, lagging, last joined (reconcileCards); behind is the
	// configuration it lags behind, since when (on its own clock):
	// lagging for lagHold with no replica saying it runs that one, it
	// takes the record over. Guarded by running.
	told     string
	behind   string
	lagSince time.Time

	mu sync.Mutex
	// known are the configurations this replica ran before the one in
	// force, oldest first, at most refreshOlds: those a sweep can
	// compare with (olds).
	known []*bound
}

// limits are r's bounds: a page, the listing, the questions edited.
func (r *tallyRefresh) limits() (page, scanMax, max int) {
	page, scanMax, max = refreshPage, refreshScanMax, refreshMax
	if r.page > 0 {
		page, scanMax, max = r.page, r.scanMax, r.max
	}
	return page, scanMax, max
}

// reloaded is told that the configuration prev is being replaced: the
// cards may have been drawn under it.
func (r *tallyRefresh) reloaded(prev *bound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.known = slices.DeleteFunc(r.known, func(b *bound) bool { return b.digest == prev.digest })
	r.known = append(r.known, prev)
	if len(r.known) > refreshOlds {
		r.known = r.known[len(r.known)-refreshOlds:]
	}
}

// knownDigests are the digests of the configurations this replica ran
// before the one in force.
func (r *tallyRefresh) knownDigests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.known))
	for i, b := range r.known {
		out[i] = b.digest
	}
	return out
}

// olds are the configurations rec's sweep compares with, each as a
// Service that reads it; all is set when the sweep edits every open
// question with a quorum: rec says so, or this replica does not know
// one of them (it never ran it, or not since it started).
func (r *tallyRefresh) olds(s *Service, rec cardsRecord) (olds []*Service, all bool) {
	if rec.All {
		return nil, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range rec.From {
		i := slices.IndexFunc(r.known, func(b *bound) bool { return b.digest == d })
		if i < 0 {
			return nil, true
		}
		olds = append(olds, s.under(r.known[i]))
	}
	return olds, false
}

// refreshTallies runs this replica's part of the sweep of cards at a
// tick: it reconciles the configuration in force here with the one the
// store says the cards are drawn under (reconcileCards), and, when a
// sweep is owed and may run, runs one page of it (sweepPage). It returns
// how many questions' cards it queued an edit of and whether the sweep
// stopped at its bound.
func (s *Service) refreshTallies(ctx context.Context) (refreshed int, cut bool, err error) {
	if !s.tallies.running.TryLock() {
		return 0, false, nil // this replica's other pass does it
	}
	defer s.tallies.running.Unlock()
	rec, sweep, err := s.reconcileCards(ctx, s.conf())
	if err != nil || !sweep {
		return 0, false, err
	}
	return s.sweepPage(ctx, rec)
}

// sweepPage runs one page of the sweep rec owes, unless a replica runs
// another configuration (its edits would show its tally: the sweep waits
// until none has for lagHold; meanwhile this replica, which runs rec's,
// says so, so that the laggard goes on lagging rather than taking the
// record over) or another replica runs a page now. The page goes on from
// where the last one, on whichever replica, left off (cardsProgress),
// under the sweep's lease.
func (s *Service) sweepPage(ctx context.Context, rec cardsRecord) (refreshed int, cut bool, err error) {
	const op = "refresh tallies"
	lag, err := s.store.Value(ctx, cardsLagKey)
	if err != nil {
		return 0, false, Internal(op, err)
	}
	if lag != "" {
		return 0, false, Internal(op, s.store.SetValueFor(ctx, cardsLiveKey, rec.Digest, lagHold))
	}
	owner := s.tallies.replica
	held, err := s.lease(ctx, cardsSweepKey, owner, sweepLease)
	if err != nil || !held {
		return 0, false, Internal(op, err)
	}
	defer func() {
		rctx, cancel := Settle(ctx)
		defer cancel()
		_ = s.store.Release(rctx, cardsSweepKey, owner) // a release lost only waits out the lease
	}()
	p, err := s.sweepProgress(ctx, rec)
	if err != nil {
		return 0, false, Internal(op, err)
	}
	// failed counts a page the store failed, and drops the sweep once it
	// has failed refreshTries times in a row.
	failed := func(err error) (int, bool, error) {
		err = Internal(op, err)
		if p.Failed++; p.Failed < refreshTries {
			return 0, false, errors.Join(err, Internal(op, s.putProgress(ctx, p)))
		}
		return 0, true, errors.Join(fmt.Errorf("%w; tried %d times, so the cards of the open questions after the first %d listed show the reload's tally at their next edit", err, refreshTries, p.Listed),
			s.endSweep(ctx, rec))
	}
	page, scanMax, most := s.tallies.limits()
	qs, next, err := s.store.ListOpen(ctx, p.Cursor, min(page, scanMax-p.Listed))
	if err != nil {
		return failed(err)
	}
	olds, all := s.tallies.olds(s, rec)
	now := s.now()
	var out []Delivery
	short := false
	for _, q := range qs {
		if !s.tallyMoved(q, olds, all) {
			continue
		}
		if p.Refreshed+refreshed >= most {
			short = true
			break
		}
		refreshed++
		for i := range q.Messages {
			out = append(out, cardUpdate(q, i, refreshKey(q, now, i), now))
		}
	}
	if err := s.store.Enqueue(ctx, out); err != nil {
		return failed(err)
	}
	p.Failed, p.Cursor, p.Listed, p.Refreshed = 0, next, p.Listed+len(qs), p.Refreshed+refreshed
	switch {
	case short:
		return refreshed, true, s.endSweep(ctx, rec)
	case next == "":
		return refreshed, false, s.endSweep(ctx, rec)
	case p.Listed >= scanMax:
		return refreshed, true, s.endSweep(ctx, rec)
	}
	return refreshed, false, Internal(op, s.putProgress(ctx, p))
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
