package core

import (
	"sync"
	"time"
)

// Clock is injected so that deadlines, expiry and retention are tested
// without sleeping.
type Clock interface {
	Now() time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

// SimClock is a clock that moves only when told. It is safe for
// concurrent use.
type SimClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewSimClock starts a simulated clock at t.
func NewSimClock(t time.Time) *SimClock { return &SimClock{t: t} }

func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *SimClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *SimClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
