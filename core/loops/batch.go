package loops

import (
	"context"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// startBatch carries out one claimed batch, keeping its claims alive
// while it works, and hands back whatever is left when ctx ends. Each
// room's deliveries go in order, one at a time (a card's post before its
// edit); the rooms of a batch go at once, so a drain after downtime
// sends into many rooms at the platforms' rate rather than at the pace
// of one send's round trips after another (issue 31: one at a time
// drained at half of Telegram's rate). The budgets keep every room, and
// the bot as a whole, within the platform's limits however many go at
// once.
//
// granted closes once every room's last delivery has its budgets' answer
// (it is being sent, or was handed back), done once the batch is
// finished. Deliver claims the next batch at granted, so the claim and
// the next batch's first grants overlap this batch's last sends: a batch
// that waited for its last send, its record and its ack before the next
// claim left a bot-wide budget idle at every batch's end (issue 31: 20
// to 60 ms a batch of ten, three batches a second, on Telegram's drain).
// A room's deliveries stay in order across batches (roomLanes).
func (s *drain) startBatch(ctx context.Context, c core.Courier, budgets core.Budgeted, ds []core.Delivery, o DeliverOptions, hb *handBacks, rooms *roomLanes) (granted, done <-chan struct{}) {
	allGranted, allDone := make(chan struct{}), make(chan struct{})
	if len(ds) == 0 {
		close(allGranted)
		close(allDone)
		return allGranted, allDone
	}
	surface := c.Surface()
	// pending is what the heartbeat keeps claimed: the deliveries of the
	// batch not yet done.
	var mu sync.Mutex
	pending := make(map[string]bool, len(ds))
	for _, d := range ds {
		pending[d.ID] = true
	}
	finished := func(id string) {
		mu.Lock()
		delete(pending, id)
		mu.Unlock()
	}
	beat, stopBeat := context.WithCancel(ctx)
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		t := time.NewTicker(o.MinIdle / 3)
		defer t.Stop()
		for {
			select {
			case <-beat.Done():
				return
			case <-t.C:
				mu.Lock()
				ids := make([]string, 0, len(pending))
				for id := range pending {
					ids = append(ids, id)
				}
				mu.Unlock()
				if err := s.store.Extend(beat, surface, o.Consumer, ids); err != nil && beat.Err() == nil {
					o.OnError(core.Delivery{Surface: surface}, core.Internal("extend", err))
				}
			}
		}
	}()

	lanes := byRoom(ds)
	var grants, ends sync.WaitGroup
	grants.Add(len(lanes))
	for _, lane := range lanes {
		after, mine := rooms.join(lane.room)
		ends.Go(func() {
			defer rooms.leave(lane.room, mine)
			var once sync.Once
			grant := func() { once.Do(grants.Done) }
			defer grant()
			<-after // the room's lane of the batch before
			for i, d := range lane.ds {
				if ctx.Err() != nil {
					// Stopping: hand back what was not sent, uncounted, so
					// another replica takes it now rather than after MinIdle.
					for _, rest := range lane.ds[i:] {
						rest.Attempts--
						s.retry(ctx, rest, o, 0)
						finished(rest.ID)
					}
					return
				}
				last := func() {}
				if i == len(lane.ds)-1 {
					last = grant
				}
				s.deliverClaimed(ctx, c, budgets, d, o, hb, last)
				finished(d.ID)
			}
		})
	}
	go func() {
		grants.Wait()
		close(allGranted)
	}()
	go func() {
		ends.Wait()
		stopBeat()
		<-beatDone
		close(allDone)
	}()
	return allGranted, allDone
}

// lane is one room's deliveries of a batch, in the order claimed.
type lane struct {
	room string
	ds   []core.Delivery
}

// byRoom splits a batch by the room each delivery goes to (an edit's
// card's room), each room's in the order claimed.
func byRoom(ds []core.Delivery) []lane {
	var lanes []lane
	at := make(map[string]int, len(ds))
	for _, d := range ds {
		room := d.Room
		if room == "" && d.Message != nil {
			room = d.Message.Room
		}
		i, ok := at[room]
		if !ok {
			i = len(lanes)
			at[room] = i
			lanes = append(lanes, lane{room: room})
		}
		lanes[i].ds = append(lanes[i].ds, d)
	}
	return lanes
}

// roomLanes keeps a room's deliveries in order across two batches at
// once: a room's lane in the next batch starts only once its lane in the
// batch before has finished.
type roomLanes struct {
	mu   sync.Mutex
	last map[string]chan struct{} // per room, closed when its latest lane ends
}

// closedLane is a lane that has finished: nothing to wait for.
var closedLane = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// join starts room's next lane: after closes when the lane before it has
// finished, and mine is this lane's, for leave.
func (r *roomLanes) join(room string) (after <-chan struct{}, mine chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = make(map[string]chan struct{})
	}
	after = closedLane
	if prev, ok := r.last[room]; ok {
		after = prev
	}
	mine = make(chan struct{})
	r.last[room] = mine
	return after, mine
}

// leave ends room's lane mine, forgetting the room if no later lane has
// joined behind it.
func (r *roomLanes) leave(room string, mine chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(mine)
	if r.last[room] == mine {
		delete(r.last, room)
	}
}
