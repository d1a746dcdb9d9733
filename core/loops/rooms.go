package loops

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// rooms is what one Deliver loop holds, room by room (an edit's room is
// its card's): the deliveries claimed and not finished, each room's in
// the order claimed, sent one at a time by a goroutine of the room's own
// (work), so a card's post goes before its edit. The rooms go at once,
// so a drain after downtime sends into many rooms at the platforms'
// rate rather than at the pace of one send's round trips after another
// (issue 31: one at a time drained at half of Telegram's rate); the
// budgets keep every room, and the bot as a whole, within the
// platform's limits however many go at once.
//
// The loop claims again (mayClaim) once the last claim's rooms have
// their budgets' answers, as a batch's did, so the claim overlaps their
// sends and a bot-wide budget is not left idle at each claim (issue 31);
// and while it holds at most a batch more: two batches at once, as
// before. But a room whose send has been out slowSend stops counting,
// with what waits behind it: only the platform can end that send, and
// the other rooms' deliveries go on being claimed and sent meanwhile.
// Before, the loop waited for every room of the batch before to finish,
// and for each room's last grant, which came only after that room's
// earlier sends: a room whose sends hung until the client's timeout (a
// webhook's dead callback URL, retried for a day) held up every other
// room's deliveries, in its batch and every later one.
//
// What a slow room may hold is bounded instead: roomMax deliveries (and
// a batch more of those coming back); what is claimed for it beyond
// that goes back to the outbox, uncounted, due a little later
// (park.go). A room that is not slow never holds more, as the loop
// claims past it only once it is. And the loop claims no more while
// maxSends rooms have a send out (those it holds may start up to two
// batches more): a platform that hangs for every room holds that many
// sends, not the whole outbox; only that many rooms hanging at once
// hold up the rest.
type rooms struct {
	s       *drain
	c       core.Courier
	budgets core.Budgeted
	o       DeliverOptions
	hb      *handBacks

	mu      sync.Mutex
	rooms   map[string]*room
	lines   map[string]*parkLine // per room, what went back to the outbox for it (park.go)
	held    map[string]int       // the ids held (claimed, not finished), for the heartbeat
	claim   uint64               // the latest claim that returned deliveries
	ord     uint64               // the latest place given in a line (park.go)
	changed chan struct{}        // closed and replaced at each change mayClaim reads
	workers sync.WaitGroup

	// confirmed is, per id held, when its claim was last known to be
	// this consumer's: the start of the claim or renewal that said so
	// (owned.go); going, the ids held that are being acked or handed
	// back (take).
	confirmed map[string]time.Time
	going     map[string]bool
}

// phase is where a room's current delivery stands.
type phase int

const (
	asking  phase = iota // its budgets have not answered yet
	working              // the loop's own work: a wait in place for a budget, the store's part, bookkeeping
	sending              // the courier's call is out: only the platform can end it
)

// room is one room's deliveries held: the current one (busy) and those
// waiting for their turn, with the claim each came in.
type room struct {
	queue []queued
	busy  bool
	phase phase
	claim uint64    // the current delivery's claim
	since time.Time // when its send went out
}

type queued struct {
	d     core.Delivery
	claim uint64
	ord   uint64 // its place in the room's line, if it came back from one
}

// add queues q, ahead of those of the room's line that came back
// before it though their place is after its.
func (rm *room) add(q queued) {
	i := len(rm.queue)
	for q.ord != 0 && i > 0 && rm.queue[i-1].ord > q.ord {
		i--
	}
	rm.queue = slices.Insert(rm.queue, i, q)
}

func (rm *room) count() int {
	if rm.busy {
		return len(rm.queue) + 1
	}
	return len(rm.queue)
}

func newRooms(s *drain, c core.Courier, budgets core.Budgeted, o DeliverOptions, hb *handBacks) *rooms {
	r := &rooms{s: s, c: c, budgets: budgets, o: o, hb: hb, rooms: map[string]*room{},
		lines: map[string]*parkLine{}, held: map[string]int{}, confirmed: map[string]time.Time{},
		going: map[string]bool{}, changed: make(chan struct{})}
	s.lettingGo = r.lettingGo
	return r
}

// roomMax is the most one room holds: two batches, as many as two
// batches at once held before.
func (r *rooms) roomMax() int { return 2 * r.o.Batch }

// maxSends is how many rooms with a send out stop the loop claiming.
func (r *rooms) maxSends() int { return 4 * r.o.Batch }

// slowSend is how long a room's send is out before the loop claims past
// the room: longer than a platform's answer takes (Telegram's 50 to 300
// ms, a mail relay's second), far shorter than a client's timeout (a
// webhook's 30 s), which is what a hanging room costs the others each
// time its sends start hanging again, where it cost them every hang.
const slowSend = time.Second

// signal wakes a loop waiting to claim; r.mu is held.
func (r *rooms) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// ready waits until the loop may claim again (mayClaim), and reports
// false if ctx ends first.
func (r *rooms) ready(ctx context.Context) bool {
	for {
		r.mu.Lock()
		ok, recheck := r.mayClaim(r.s.svc.Now())
		changed := r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		t := time.NewTimer(recheck)
		if recheck <= 0 {
			t.Stop() // nothing turns slow: only a change can help
		}
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
}

// mayClaim reports whether no delivery of the latest claim is still
// waiting for its budgets' answer at the head of its room, the rooms
// hold at most a batch (but a room whose send has been out slowSend
// does not count: only the platform can say when it ends), and fewer
// than maxSends rooms have a send out; if not, and a room's send turns
// slow in time, in how long to ask again. r.mu is held.
func (r *rooms) mayClaim(now time.Time) (ok bool, recheck time.Duration) {
	held, out := 0, 0
	for _, rm := range r.rooms {
		switch {
		case !rm.busy: // its first delivery is about to ask
			if len(rm.queue) > 0 && rm.queue[0].claim == r.claim {
				return false, 0
			}
		case rm.phase == asking && rm.claim == r.claim:
			return false, 0
		case rm.phase == sending:
			out++
			if slowFor := slowSend - now.Sub(rm.since); slowFor > 0 {
				if recheck == 0 || slowFor < recheck {
					recheck = slowFor
				}
			} else {
				continue // slow: it holds up no claim
			}
		}
		held += rm.count()
	}
	if held <= r.o.Batch && out < r.maxSends() {
		return true, 0
	}
	if out >= r.maxSends() {
		recheck = 0 // only a send's end frees one
	}
	return false, recheck
}

// take hands a claim's deliveries, claimed by a call that began at at,
// to their rooms, starting a room's goroutine if it has none, and sends
// back to the outbox those whose room holds all it may or has
// deliveries waiting there before them (park.go).
func (r *rooms) take(ctx context.Context, ds []core.Delivery, at time.Time) {
	if len(ds) == 0 {
		return
	}
	type back struct {
		d   core.Delivery
		due time.Time
	}
	var backs []back
	r.mu.Lock()
	r.claim++
	now := r.s.svc.Now()
	for name, l := range r.lines {
		if l.forget(now, forgetAfter(r.o)); len(l.keys) == 0 {
			delete(r.lines, name) // its deliveries went to another consumer
		}
	}
	for _, d := range ds {
		if r.held[d.ID] > 0 && !r.going[d.ID] {
			// Handed out again while held, unsettled: the store took
			// this consumer's renewals for lapsed (it was away past
			// MinIdle, and this claim reached it before the next
			// renewal) and gave the claim back to the same consumer,
			// under the same id. It waits in its room already, or is
			// on its way: queued again, it went out twice.
			r.confirm(at, d.ID)
			continue
		}
		delete(r.going, d.ID) // claimed anew after it was let go: this claim is live
		name := roomOf(d)
		rm := r.rooms[name]
		held, sendFor := 0, time.Duration(0)
		if rm != nil {
			held = rm.count()
			if rm.busy && rm.phase == sending {
				sendFor = now.Sub(rm.since)
			}
		}
		join, ord, due := r.admit(name, d.Key, held, now, sendFor)
		if !join {
			backs = append(backs, back{d, due})
			continue
		}
		if rm == nil {
			rm = &room{}
			r.rooms[name] = rm
			r.workers.Go(func() { r.work(ctx, name) })
		}
		rm.add(queued{d, r.claim, ord})
		// Counted: a delivery handed back with no wait may be claimed
		// again before its room has done with it under the same id
		// (going, above).
		r.held[d.ID]++
		r.confirm(at, d.ID)
	}
	r.signal()
	r.mu.Unlock()
	for _, b := range backs {
		// Not attempted: it goes back as the stop path's hand-back
		// does, due at its turn in its room's line, the wait taken now,
		// so that one store write taking longer than another does not
		// put the line out of turn.
		b.d.Attempts--
		r.s.retry(ctx, b.d, r.o, b.due.Sub(r.s.svc.Now()))
	}
}

// roomOf is the room d goes to: an edit's is its card's.
func roomOf(d core.Delivery) string {
	if d.Room == "" && d.Message != nil {
		return d.Message.Room
	}
	return d.Room
}

// work sends room name's deliveries one at a time, in order, until it
// holds none. When ctx ends, what was not sent is handed back at once,
// uncounted, so another replica takes it now rather than after MinIdle.
func (r *rooms) work(ctx context.Context, name string) {
	for {
		d, ok := r.next(name)
		if !ok {
			return
		}
		if ctx.Err() != nil {
			r.handBack(ctx, name, d)
			return
		}
		r.s.deliverClaimed(ctx, r.c, r.budgets, d, r.o, r.hb, turn{r, name})
		r.finished(name, d.ID)
	}
}

// next makes room name's first waiting delivery its current one, or, if
// none waits, forgets the room and reports false.
func (r *rooms) next(name string) (core.Delivery, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.signal()
	rm := r.rooms[name]
	if len(rm.queue) == 0 {
		delete(r.rooms, name)
		return core.Delivery{}, false
	}
	q := rm.queue[0]
	rm.queue[0] = queued{}
	rm.queue = rm.queue[1:]
	rm.busy, rm.phase, rm.claim = true, asking, q.claim
	return q.d, true
}

// finished ends room name's current delivery (id).
func (r *rooms) finished(name, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.release(id)
	r.rooms[name].busy = false
	r.signal()
}

// handBack puts d, room name's current delivery, and those waiting
// behind it back in the outbox, due at once and uncounted, and forgets
// the room.
func (r *rooms) handBack(ctx context.Context, name string, d core.Delivery) {
	r.mu.Lock()
	rest := []core.Delivery{d}
	for _, q := range r.rooms[name].queue {
		rest = append(rest, q.d)
	}
	delete(r.rooms, name)
	r.signal()
	r.mu.Unlock()
	for _, d := range rest {
		d.Attempts--
		r.s.retry(ctx, d, r.o, 0)
		r.mu.Lock()
		r.release(d.ID)
		r.mu.Unlock()
	}
}

// release ends one hold of id; r.mu is held.
func (r *rooms) release(id string) {
	if r.held[id]--; r.held[id] <= 0 {
		delete(r.held, id)
		delete(r.confirmed, id)
		delete(r.going, id)
	}
}

// turn is a room's current delivery's progress, as deliverClaimed
// reports it.
type turn struct {
	r    *rooms
	name string
}

// granted: its budgets have answered (it is waiting in place for a
// send, or on its way, or going back to the outbox).
func (t turn) granted() { t.r.set(t.name, working) }

// sending: the courier's call is going out.
func (t turn) sending() { t.r.set(t.name, sending) }

// stillClaimed: whether the delivery is still this consumer's claim
// (owned.go).
func (t turn) stillClaimed(ctx context.Context, id string) (bool, error) {
	return t.r.stillClaimed(ctx, id)
}

func (r *rooms) set(name string, p phase) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm := r.rooms[name]
	if p == working && rm.phase != asking {
		return // granted again (deliverClaimed's last word): no news
	}
	rm.phase = p
	if p == sending {
		rm.since = r.s.svc.Now()
	}
	r.signal()
}

// heartbeat renews the claims on what is held every MinIdle/3 until ctx
// ends, so a slow send is never taken over from a live consumer. A
// claim the store no longer counts as this consumer's (it was frozen
// past MinIdle, a GC pause or a stopped VM, and another replica took it
// over) is dropped unsent from its room's queue (law 4: the other
// replica sends it now, and a second copy from here would go out
// unflagged), and logged once, with the count.
func (r *rooms) heartbeat(ctx context.Context) {
	surface := r.c.Surface()
	t := time.NewTicker(r.o.MinIdle / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.mu.Lock()
			ids := make([]string, 0, len(r.held))
			for id := range r.held {
				ids = append(ids, id)
			}
			claim := r.claim
			r.mu.Unlock()
			if len(ids) == 0 {
				continue
			}
			began := r.s.svc.Now()
			lost, err := r.s.store.Extend(ctx, surface, r.o.Consumer, ids)
			if err != nil && ctx.Err() == nil {
				r.o.OnError(core.Delivery{Surface: surface}, core.Internal("extend", err))
			}
			r.renewed(began, ids, lost, err == nil)
			if n := r.drop(lost, claim); n > 0 {
				r.o.OnError(core.Delivery{Surface: surface}, core.Internal("extend",
					fmt.Errorf("%d claimed deliveries were taken over by another consumer: dropped unsent", n)))
			}
		}
	}
}

// drop takes the deliveries ids out of the rooms' queues, unsent, and
// reports how many it took. Only those of claim (the latest when ids
// were read) or an earlier one: the store's answer came after their
// claims, so it speaks of them, while one claimed again since (handed
// back, and claimed anew under the same id) may be this consumer's
// again whatever it said. A room's current delivery is left to finish:
// its send may be out.
func (r *rooms) drop(ids []string, claim uint64) int {
	if len(ids) == 0 {
		return 0
	}
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rm := range r.rooms {
		rm.queue = slices.DeleteFunc(rm.queue, func(q queued) bool {
			if !gone[q.d.ID] || q.claim > claim {
				return false
			}
			r.release(q.d.ID)
			n++
			return true
		})
	}
	if n > 0 {
		r.signal()
	}
	return n
}
