package core

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The ends of runs cut short. The store marks a run ended before
// Service.EndRun expires its open questions one by one, so a process
// killed in between (or a store failing partway) would leave them open
// and answerable until their deadlines, with nothing to close them. So
// EndRun journals the run ([Endings]) before the mark and drops it once
// all is done: a run still journalled well after its ending began was cut
// short, and the ticker ends it again (finishEndings). Every tick also
// keeps what the journal holds (endingsSeen), so that a person's act on
// a question of a run being ended expires the question and is refused
// (refuseIfEnding), as a late answer is, without a read of the store per
// answer.

// endingAbandoned is how long after it began a journalled ending is taken
// to be cut short rather than under way: twice what an EndRun goes on for
// once the run is marked (endRunWithin), so that the ticker does not race
// a live one through its questions (whose caller would then be told of
// fewer expiries than it caused).
const endingAbandoned = 2 * endRunWithin

// endingsSeen are the runs (their Run.Key) being ended, as this replica
// last knew them: the journal as the last tick read it, with the endings
// this replica began since and without those it finished. A run another
// replica began ending since that tick is missing until the next one,
// which is how long a person's act on its questions may still be taken
// after a crash cut its ending short (rather than until their deadlines).
type endingsSeen struct {
	mu   sync.Mutex
	runs map[string]bool
}

// has reports whether run is being ended, as far as this replica knows.
func (e *endingsSeen) has(run string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[run]
}

// begin and done note an ending this replica began and finished.
func (e *endingsSeen) begin(run string) { e.set(run, true) }
func (e *endingsSeen) done(run string)  { e.set(run, false) }

func (e *endingsSeen) set(run string, on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if on {
		if e.runs == nil {
			e.runs = map[string]bool{}
		}
		e.runs[run] = true
	} else {
		delete(e.runs, run)
	}
}

// replace puts the journal as just read in place of what was known.
func (e *endingsSeen) replace(runs []string) {
	m := make(map[string]bool, len(runs))
	for _, r := range runs {
		m[r] = true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs = m
}

// finishEndings reads the journal (keeping it whole for refuseIfEnding,
// whatever times other replicas' clocks gave its entries), ends again
// each run whose ending began endingAbandoned or more before now, at
// most tickBatch of them, and says how many questions it expired. Ending
// a run again lists its open questions as the first time did
// (Questions.EndRun), so this expires what was left open, ends what
// standing approvals were left, and drops the run from the journal. The
// journal holds only the endings under way, so with none it costs a tick
// one small read.
func (s *Service) finishEndings(ctx context.Context, now time.Time) (int, error) {
	const op = "finish run endings"
	journal, err := s.store.UnfinishedEndings(ctx)
	if err != nil {
		return 0, Internal(op, err)
	}
	runs := make([]string, len(journal))
	for i, e := range journal {
		runs[i] = e.Run
	}
	s.endings.replace(runs)
	abandoned := now.Add(-endingAbandoned)
	expired := 0
	var errs []error
	for i, e := range journal {
		if i == tickBatch || e.Began.After(abandoned) {
			break // oldest first: the rest are younger still, or the next tick's
		}
		run, ok := runOfKey(e.Run)
		if !ok {
			// Not a key EndRun wrote: nothing to finish, and left in the
			// journal it would be read on every tick.
			errs = append(errs, Errorf(CodeInternal, op, "the journal names no run: %q", e.Run))
			if err := s.store.EndingDone(ctx, e.Run); err != nil {
				errs = append(errs, Internal(op, err))
			}
			continue
		}
		out, err := s.EndRun(ctx, run)
		expired += len(out)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return expired, errors.Join(errs...)
}

// refuseIfEnding is a person's act on the open question q while its run
// is being ended (an ending under way, or one cut short, as endingsSeen
// knows): it closes q as expired through the chokepoint and returns the
// ClosedError an act on an expired question gets, so resolve refuses it
// as any late answer (an approve taken there could grant a standing
// approval for a run that has ended). nil when q's run is not ending.
func (s *Service) refuseIfEnding(ctx context.Context, q *Question) error {
	if q.RunID == "" || !s.endings.has(q.Run().Key()) {
		return nil
	}
	o, err := s.expire(ctx, q.Run(), q.ID)
	if err != nil {
		return err // a ClosedError if another close came first: resolve tells who
	}
	return &ClosedError{Question: o.Question}
}
