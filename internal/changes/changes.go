// Package changes lets the local platform fakes (and test doubles) be
// waited on: writers Notify after every change, and waiters re-check their
// condition after each one instead of polling on a timer.
package changes

import (
	"sync"
	"time"
)

// Signal is a broadcast of "something changed". The zero value is ready.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// C returns a channel that is closed at the next Notify. Take it before
// reading the state it guards, so no change between the two is missed.
func (s *Signal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Notify wakes everyone holding a channel from C.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
	}
	s.ch = make(chan struct{})
}

// Wait reports whether cond holds within timeout, re-checking it after
// every Notify. A cond that also reads state the signal does not cover (a
// store the fake's client writes to, say) is re-checked every tick too;
// tick 0 means never.
func (s *Signal) Wait(timeout, tick time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var ticks <-chan time.Time
	if tick > 0 {
		t := time.NewTicker(tick)
		defer t.Stop()
		ticks = t.C
	}
	for {
		ch := s.C()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-ticks:
		case <-deadline.C:
			return cond()
		}
	}
}
