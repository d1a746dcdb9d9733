package teams

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Teams' "Optimize your bot with rate limiting" (SOURCES) asks a bot
// that is answered 429 to back off exponentially, with random jitter, so
// that the requests it holds back do not all collide again on the retry.
// A 429 reaches the outbox as a core.RetryAfter, which uses up no
// attempt, so the outbox's own back-off (by attempts, as a 412's is)
// never grows for it: the wait is the connector's to grow.
const (
	// throttleFirst is the most the first 429 without a Retry-After
	// waits; each one after it in the same conversation doubles it.
	throttleFirst = 2 * time.Second
	// throttleMost bounds the wait (Teams names no bound), so that a
	// card is not held back long after the throttling has ended.
	throttleMost = time.Minute
	// throttleConvs bounds the conversations remembered at once: one
	// forgotten starts its back-off again, which costs only a retry
	// sooner.
	throttleConvs = 4096
)

// throttle counts, per conversation, the 429s in a row since its last
// call that worked, and turns them into the wait before the next try.
type throttle struct {
	mu     sync.Mutex
	streak map[string]int
}

// wait counts a 429 in conv and returns how long to wait before trying
// conv again: named, when the service named a wait (Retry-After), which
// is kept to as it is; else a random wait in the upper half of
// throttleFirst doubled for each 429 before it in a row, at most
// throttleMost. The lower half is left out so that even the luckiest
// draw backs off further each time.
func (t *throttle) wait(conv string, named time.Duration) time.Duration {
	t.mu.Lock()
	n := t.streak[conv]
	if t.streak == nil || len(t.streak) >= throttleConvs {
		t.streak = map[string]int{}
	}
	t.streak[conv] = n + 1
	t.mu.Unlock()
	if named > 0 {
		return named
	}
	ceil := min(throttleFirst<<min(n, 10), throttleMost)
	return ceil/2 + rand.N(ceil/2+1)
}

// ok forgets conv's 429s: a call in it worked.
func (t *throttle) ok(conv string) {
	t.mu.Lock()
	delete(t.streak, conv)
	t.mu.Unlock()
}
