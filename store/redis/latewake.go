package redis

import (
	"context"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// lateConfirmFor bounds how long a change whose wait ran out is waited
// for again (lateWakes).
const lateConfirmFor = 30 * time.Second

// lateWakes are the changes, per shard, whose durable wait ran out (a
// slow replica, or one away for a moment) or was cut short by its caller
// (announceWhenHeld), and that no one has announced:
// their callers were told "maybe recorded", and nothing else would wake
// their waiters, since a retry finds the change made and commits nothing.
// Until one is announced, no waiter on any replica learns of it before
// it reads by itself (an API long poll: minutes later).
//
// One loop per shard waits for them, not one per change: a wait holds a
// pooled connection for up to Timeout, and with a replica away every
// close of a tick would otherwise hold one each, until the pool ran dry
// and the store failed for everything. One wait covers everything the
// primary holds, so it confirms every change pending in its shard.
type lateWakes struct {
	mu      sync.Mutex
	closed  bool                                  // Close has begun: no loop starts
	pending map[int]map[core.QuestionID]time.Time // shard -> id -> given up at
	running map[int]bool
}

// announceWhenHeld has id's change in shard announced once its replicas
// hold it, or given up on after lateConfirmFor (its waiters then learn of
// it at their next read). It is called when a transition failed after its
// script may have been sent: with durability on, the script published no
// wake-up. Not only a wait that ran out: a caller's context that ended
// while the script and its wait were out (its deadline, with
// context_timeout_enabled; or any reply lost once its deadline had
// passed, which go-redis then does not send again) leaves a change on the
// primary that nothing else would announce, and an agent waiting on
// another replica would sleep through an answer recorded and held until
// its own wait ran out. A change that was not made costs its waiters one
// read; so does one a failover lost, as the new primary's replicas
// confirm at once. Without durability the script has published its
// wake-up, and this does nothing.
func (s *Store) announceWhenHeld(shard int, id core.QuestionID) {
	dc, ok := s.client.(*durableClient)
	if !ok {
		return
	}
	w := &s.lateWakes
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if w.pending == nil {
		w.pending, w.running = map[int]map[core.QuestionID]time.Time{}, map[int]bool{}
	}
	if w.pending[shard] == nil {
		w.pending[shard] = map[core.QuestionID]time.Time{}
	}
	w.pending[shard][id] = time.Now().Add(lateConfirmFor)
	if !w.running[shard] {
		w.running[shard] = true
		s.late.Go(func() { s.confirmLate(dc, shard) })
	}
}

// confirmLate is shard's loop: it waits for the replicas, announces what
// was pending when a wait holds, drops what has waited lateConfirmFor,
// and ends with nothing pending or the store closing. Close waits for it,
// for up to a wait's Timeout.
func (s *Store) confirmLate(dc *durableClient, shard int) {
	w := &s.lateWakes
	ctx := context.Background()
	for {
		start := time.Now()
		held := dc.confirm(ctx, s.sk[shard].events) == nil // any key of the shard: its slot
		w.mu.Lock()
		var woken []core.QuestionID
		for id, until := range w.pending[shard] {
			if held || time.Now().After(until) {
				delete(w.pending[shard], id)
				if held {
					woken = append(woken, id)
				}
			}
		}
		done := len(w.pending[shard]) == 0
		if done {
			w.running[shard] = false
		}
		w.mu.Unlock()
		for _, id := range woken {
			s.announce(ctx, shard, id)
			s.signal(id)
		}
		if done {
			return
		}
		// A wait refused at once (the node unreachable) is tried again
		// after what a wait would have taken.
		select {
		case <-s.done:
			w.mu.Lock()
			w.running[shard] = false
			w.mu.Unlock()
			return
		case <-time.After(dc.d.Timeout - time.Since(start)):
		}
	}
}

// closeLate has no loop start from now on; Close then waits for those
// running (s.late).
func (s *Store) closeLate() {
	s.lateWakes.mu.Lock()
	s.lateWakes.closed = true
	s.lateWakes.mu.Unlock()
}
