package loops

import (
	"slices"
	"time"
)

// A delivery claimed for a room that already holds all it may (roomMax)
// goes back to the outbox, uncounted, due a little later, rather than
// being held in memory behind a send that may hang until the client's
// timeout: so the loop goes on to the other rooms' deliveries behind it
// in the outbox, and a slow room does not make it claim without limit.
//
// The room's deliveries sent back so wait in a line, kept here
// (parkLine), so that they keep their order: each falls due after the
// one sent back before it, and one claimed for the room while any of
// them waits goes back behind them, so a card asked later is not posted
// before them. One that comes back joins its room if the room holds
// fewer than roomMax and a batch more (the room has room for it, or
// nearly), ahead of any of the line that came back before it and has
// not started (the store's clock may hand two of them back a little
// out of turn); if not, it goes back to the end of the line, keeping
// its place for when it joins. Two can still go out of turn: one that
// comes back out of turn to a room with nothing waiting goes before the
// one ahead of it, and those behind one that found no room may join
// before it comes round again.
//
// How long one waits grows with how long its room's current send has
// been out (parkWait, up to maxParkWait), and the line falls due spread
// over that time, at most roomMax of it in that time: a room whose sends
// hang is asked again now and then, not by every delivery waiting for
// it each second, while a room that is merely busy (a burst of webhook
// calls to one URL) gets its deliveries back about as fast as it sends
// them.

// parkWait is the least a delivery sent back for its busy room waits.
const parkWait = 100 * time.Millisecond

// maxParkWait is the most it waits, past a client's timeout (a
// webhook's 30 s): by then the send that held its room has ended.
const maxParkWait = time.Minute

// parkLine is one room's deliveries waiting in the outbox because the
// room was busy, in the order they are to go, by key (a delivery's id
// may change when it goes back: Redis adds it to its stream again).
type parkLine struct {
	keys []parked
	last time.Time // when the latest of them falls due
}

type parked struct {
	key string
	due time.Time
	ord uint64 // its place in the line, kept when it goes back again
}

// admit reports whether delivery key of room name joins the room now,
// and its place in the line if it comes from one (0: none), or when it
// is due again in the outbox. held is what the room holds; sendFor, how
// long its current send has been out. r.mu is held.
func (r *rooms) admit(name, key string, held int, now time.Time, sendFor time.Duration) (join bool, ord uint64, due time.Time) {
	l := r.lines[name] // take has forgotten what did not come back
	if l == nil {
		if held < r.roomMax() {
			return true, 0, time.Time{}
		}
		l = &parkLine{}
		r.lines[name] = l
	}
	i := slices.IndexFunc(l.keys, func(p parked) bool { return p.key == key })
	if i >= 0 {
		ord = l.keys[i].ord
		l.keys = slices.Delete(l.keys, i, i+1)
		if held < r.roomMax()+r.o.Batch {
			if len(l.keys) == 0 {
				delete(r.lines, name)
			}
			return true, ord, time.Time{}
		}
	} else {
		r.ord++
		ord = r.ord
	}
	due = l.next(now, sendFor, r.roomMax())
	l.keys = append(l.keys, parked{key, due, ord})
	return false, 0, due
}

// next is when the delivery going back to the line now falls due: after
// the wait its room's send calls for (parkWait, up to maxParkWait), and
// after the one that went back before it, by 1/per of that wait.
func (l *parkLine) next(now time.Time, sendFor time.Duration, per int) time.Time {
	wait := min(max(parkWait, sendFor), maxParkWait)
	due := now.Add(wait)
	if after := l.last.Add(wait / time.Duration(per)); after.After(due) {
		due = after
	}
	l.last = due
	return due
}

// forgetAfter is how long after it fell due a delivery of a line that
// has not come back is forgotten: by then another consumer has taken it
// (replicas share the outbox), or it is gone, and the room's new
// deliveries stop going round the line behind it. Not sooner: this loop
// may claim it back long after it fell due (it claims no more while the
// rooms hold more than a batch, and on Redis a retry that falls due goes
// back on the stream behind whatever waits there), and forgotten sooner
// it came back as a new delivery, to the end of its room's line, behind
// cards asked after it. A line kept for one that went elsewhere costs
// only a detour: the room's new deliveries meanwhile go back to the
// outbox once each, behind the line.
func forgetAfter(o DeliverOptions) time.Duration { return max(2*o.Block, maxParkWait) }

// forget drops the line's deliveries that fell due more than grace ago
// and have not come back: another consumer took them (or acked them),
// and the line does not wait for them.
func (l *parkLine) forget(now time.Time, grace time.Duration) {
	l.keys = slices.DeleteFunc(l.keys, func(p parked) bool { return now.Sub(p.due) > grace })
}
