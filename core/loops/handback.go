package loops

import (
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// handBacks spreads the deliveries that one Deliver loop hands back to
// the outbox for a spent budget over the times that budget will have a
// send again, one per send, instead of making them all due when its next
// send comes: a thousand card edits behind a budget of fifty a minute
// (Slack's chat.update) were otherwise claimed, refused by the budget and
// written back every 1.2 s, a thousand store writes a second that each
// click of the burst queued behind (issue 31). Each replica keeps its own
// estimate; the budget in the store still decides, so one handed back too
// early is only handed back again.
type handBacks struct {
	mu   sync.Mutex
	next map[string]time.Time // per budget key, the first time not yet given out
}

// maxHandBacks bounds the budgets remembered; past it, those whose times
// have passed are forgotten.
const maxHandBacks = 4096

// wait is how long a delivery that key's budget (limit l) refused, asking
// wait, is to wait: until the first of the budget's coming sends that no
// other delivery handed back here was given.
func (h *handBacks) wait(key string, l core.Limit, wait time.Duration, now time.Time) time.Duration {
	if l.Rate <= 0 || l.Per <= 0 {
		return wait
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.next == nil {
		h.next = make(map[string]time.Time)
	}
	if len(h.next) >= maxHandBacks {
		for k, t := range h.next {
			if !t.After(now) {
				delete(h.next, k)
			}
		}
	}
	at := now.Add(wait)
	if n := h.next[key]; n.After(at) {
		at = n
	}
	h.next[key] = at.Add(l.Per / time.Duration(l.Rate))
	return at.Sub(now)
}
