package core

import "sync"

// remindScan says whether a Remind pass needs to list the open questions
// at all. A question keeps the reminders of the route it was asked under
// (Question.AskedRoute), so the configuration in force does not settle it:
// a replica started on a file without reminders may find questions asked
// under one that had them, and a reload that takes reminders away leaves
// the questions asked before it to be reminded. So the scan is on at
// start and whenever a configuration with reminders is put in force, and
// goes off only after two whole passes in a row under one configuration
// without reminders found no open question with any. Two, not one, so
// that an ask still in flight under the configuration before (its route
// computed, its write not yet in the store) is listed by the second.
type remindScan struct {
	mu sync.Mutex
	on bool
	// clean is the configuration the last pass found nothing under; nil
	// if the last pass found something, failed, or none ran yet.
	clean *bound
	// done is, per open question, the reminder this replica has seen
	// claimed (sent by it or by another): a pass leaves it be until the
	// next one falls due, rather than taking its claim again, a store
	// write per open question every pass. It holds the questions the last
	// whole pass listed, and starts empty, so a restart claims again.
	done map[QuestionID]int
	// kept is, per claim of a re-notice (renotifyOnce) that this replica
	// took and could not give back once the re-notice failed (the store
	// away for both), the owner it took the claim under. The next try of
	// the same claim takes it as that owner's, and stores the re-notice:
	// under a new owner it found the claim held, took the re-notice for
	// stored, and a catch-up finished with the question never re-notified
	// and nothing in its log to say so (law 8), a pass never sent the
	// reminder. At most maxKept; past that a claim stays held until it
	// lapses, as it did before. A whole pass drops those of questions no
	// longer open (noted), which no try will come back for.
	kept map[string]keptClaim
	// again are the questions forgotten (forget) since the last pass
	// ended: a pass under way may have seen their reminder claimed before
	// it went back, and does not note it so.
	again map[QuestionID]bool
}

// maxKept bounds remindScan.kept: claims not given back are a store's
// brief absence, a handful each time.
const maxKept = 4096

// keptClaim is a claim not given back: the owner it was taken under and
// the question it is of.
type keptClaim struct {
	owner string
	q     QuestionID
}

// ownerOf is the owner to take claim under: the one kept for it (taken
// out, so that one try alone uses it), else a new one.
func (r *remindScan) ownerOf(claim string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := r.kept[claim]; ok {
		delete(r.kept, claim)
		return k.owner
	}
	return string(NewID(0))
}

// keep records that claim, of q, is held under owner, not given back.
func (r *remindScan) keep(q QuestionID, claim, owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept == nil {
		r.kept = make(map[string]keptClaim)
	}
	if len(r.kept) < maxKept {
		r.kept[claim] = keptClaim{owner, q}
	}
}

// claimed reports whether reminder k of q is known to be claimed.
func (r *remindScan) claimed(q QuestionID, k int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done[q] == k
}

// forget drops what this replica saw claimed of q's reminders, so the
// next pass takes the claim again: one the catch-up gave back
// (gaveUpRenotice) is then sent.
func (r *remindScan) forget(q QuestionID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.done, q)
	if r.again == nil {
		r.again = make(map[QuestionID]bool)
	}
	r.again[q] = true
}

// keptOf is the questions of the claims kept now.
func (r *remindScan) keptOf() map[QuestionID]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	qs := make(map[QuestionID]bool, len(r.kept))
	for _, k := range r.kept {
		qs[k.q] = true
	}
	return qs
}

// noted keeps, from a pass that listed every open question, the
// reminders it found claimed (seen): the questions it did not list have
// closed, and are forgotten, as are those forgotten while it ran. The
// claims kept of questions with claims kept when it began that it did
// not list (gone) are dropped too: no try comes back for them, and
// without this kept filled with claims of closed questions over a long
// run, and past maxKept kept nothing.
func (r *remindScan) noted(seen map[QuestionID]int, gone map[QuestionID]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for q := range r.again {
		delete(seen, q)
	}
	r.done, r.again = seen, nil
	for claim, k := range r.kept {
		if gone[k.q] {
			delete(r.kept, claim)
		}
	}
}

// configured is told of each configuration put in force.
func (r *remindScan) configured(b *bound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clean = nil
	if hasReminders(b) {
		r.on = true
	}
}

// needed reports whether a pass should list the open questions.
func (r *remindScan) needed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.on
}

// passed is told how a whole pass that began under b went: found is
// whether any open question it listed has reminders on the route it was
// asked under. live is the configuration in force now, read under the
// lock so that a reload between the pass and this call keeps the scan on.
func (r *remindScan) passed(b *bound, found bool, live func() *bound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if found || live() != b || hasReminders(b) {
		r.clean = nil
		return
	}
	if r.clean == b {
		r.on = false
		return
	}
	r.clean = b
}

func hasReminders(b *bound) bool {
	for _, route := range b.cfg.Routes {
		if route.RemindEvery > 0 {
			return true
		}
	}
	return false
}
