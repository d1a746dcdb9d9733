// Package inhand counts the work an adapter took in hand that its
// stopping must wait for: a click a platform handed over once (Discord's
// gateway), a reply prompt promised to a tapper (Telegram), a wait parked
// on a connection taken over from net/http (the HTTP API). Work taken
// before the stop is seen through; none is taken after it, so the wait
// ends, and the program closes the store only once nothing uses it.
package inhand

import "sync"

// Group counts work in hand. Its zero value takes work.
type Group struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// Add counts one more piece of work in hand, unless Stop has begun; the
// caller calls Done once it is over. It reports whether it counted it.
func (g *Group) Add() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.wg.Add(1) // under mu, so never after Wait has begun
	return true
}

// Done ends one piece of work Add counted.
func (g *Group) Done() { g.wg.Done() }

// Go runs f on a goroutine of its own, counted, unless Stop has begun;
// it reports whether f was started.
func (g *Group) Go(f func()) bool {
	if !g.Add() {
		return false
	}
	go func() {
		defer g.Done()
		f()
	}()
	return true
}

// Stop takes no more work.
func (g *Group) Stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
}

// Stopped reports whether Stop has begun.
func (g *Group) Stopped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped
}

// Wait waits until the work in hand is over; after Stop, none comes.
func (g *Group) Wait() { g.wg.Wait() }

// Close is Stop, then Wait.
func (g *Group) Close() {
	g.Stop()
	g.Wait()
}
