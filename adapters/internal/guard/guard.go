// Package guard bounds how fast one client may try secrets at askbridge's
// doors. It reads who the client is (ClientAddr, through the reverse
// proxies the operator trusts), keeps a budget per client in a
// core.Budget (the store, so that replicas share it: Limiter), and for
// bearer tokens keeps a budget that only wrong secrets spend (Guesses),
// so a caller that authenticates correctly never slows itself down. The
// console's sign-in and every door that takes the API's tokens use it.
package guard

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/askbridge/askbridge/core"
)

// Limiter is a budget per client address: Key followed by the address
// names it in Budget, which keeps it at Limit.
type Limiter struct {
	Budget core.Budget
	// Key is the budget's namespace, such as "console:signin:".
	Key   string
	Limit core.Limit
	// Proxies are the trusted reverse proxies (ClientAddr).
	Proxies []netip.Prefix
	// Now is the clock Guesses times its holds on, the budget's own
	// (the service's); nil is the wall clock.
	Now func() time.Time
}

// Spend takes one attempt from the budget of r's client and reports 0,
// or, if it has none now, takes nothing and reports how long until it
// will. A Limiter without a Budget spends nothing and never waits.
func (l Limiter) Spend(ctx context.Context, r *http.Request) (time.Duration, error) {
	if l.Budget == nil {
		return 0, nil
	}
	return l.Budget.Spend(ctx, l.Key+ClientAddr(r, l.Proxies), l.Limit)
}

// RetryAfter is wait as a Retry-After header says it: whole seconds,
// rounded up, at least 1.
func RetryAfter(wait time.Duration) string {
	return strconv.FormatInt(int64(max((wait+time.Second-1)/time.Second, 1)), 10)
}

// Guesses bounds wrong secrets per client address. Only a wrong secret
// spends from the client's budget, so callers that authenticate correctly
// are never slowed by their own requests. Once a client's budget is spent,
// its requests are refused before their secret is looked at, right or
// wrong, until the budget has a guess again: were any right secret let
// through, the refusal of the wrong ones would tell a guesser which of
// its guesses was right, at any rate it liked. For the same reason a
// client's secrets are looked at one at a time, each wrong one counted
// before the next is looked at, so that guesses sent at once are not all
// looked at before the budget says the client is out. The exception is a
// secret this replica has already seen succeed from that client (within
// knownFor): it tells a guesser nothing, and it keeps the agents on a
// host working while something else there (a process still presenting a
// token that was rotated away) spends the host's guesses.
//
// Which clients are out is remembered on this replica, as the budget said
// when their last wrong secret was refused, so that a right secret costs
// no read of the store; the budget itself is the store's, shared by the
// replicas, and a client that is out on one replica finds out on another
// with its next wrong secret there.
type Guesses struct {
	lim Limiter
	now func() time.Time
	// Failed hears of a budget that could not be read; the client is
	// then held for storeHold, so a store that is down does not open the
	// door to guessing.
	failed func(error)

	mu    sync.Mutex
	out   map[string]time.Time              // client -> when its budget has a guess again
	known map[string]map[[32]byte]time.Time // client -> digests of secrets found from it -> when
	turns map[string]*turn                  // client -> its turn, while a secret of its is looked at
}

// turn lets one secret of a client at a time be looked at and, if wrong,
// counted; users are the requests holding it or waiting for it, and the
// turn is dropped with the last of them.
type turn struct {
	ch    chan struct{}
	users int
}

// knownFor is how long a secret found from a client still passes while
// that client is out of guesses; maxKnown bounds the secrets remembered
// per client.
const (
	knownFor = time.Hour
	maxKnown = 16
)

// maxOut bounds how many clients Guesses remembers as out; past it, the
// ones whose wait is over are dropped, then any.
const maxOut = 1 << 16

// storeHold is how long a client whose wrong secret could not be counted
// (the budget's store failed) is held before its next try.
const storeHold = time.Second

// NewGuesses bounds wrong secrets with l (its Budget may not be nil: pass
// membudget.New for a process of its own); failed, when set, hears of a
// budget that could not be read.
func NewGuesses(l Limiter, failed func(error)) *Guesses {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	return &Guesses{lim: l, now: now, failed: failed, out: map[string]time.Time{},
		known: map[string]map[[32]byte]time.Time{}, turns: map[string]*turn{}}
}

// Check runs find, the lookup of r's secret, unless r's client is out of
// guesses and secret is not one already found from it: then find is not
// run, and ok is false with how long the client must wait. A wrong
// secret (find false) spends one guess; the wait is then above 0 if the
// client had none left. ok is true only when find found the secret. A
// secret not already found from the client waits its turn behind the
// others from it (take).
func (g *Guesses) Check(r *http.Request, secret string, find func() bool) (ok bool, wait time.Duration) {
	client := ClientAddr(r, g.lim.Proxies)
	digest := sha256.Sum256([]byte(secret))
	wait, known := g.gate(client, digest)
	if wait > 0 {
		return false, wait
	}
	if !known {
		release, in := g.take(r.Context(), client)
		if !in {
			return false, 0 // the client left while it waited
		}
		defer release()
		if wait := g.held(client); wait > 0 {
			return false, wait // a secret counted meanwhile found the client out
		}
	}
	if find() {
		g.remember(client, digest)
		return true, 0
	}
	wait, err := g.lim.Budget.Spend(r.Context(), g.lim.Key+client, g.lim.Limit)
	if err != nil {
		if g.failed != nil && r.Context().Err() == nil {
			g.failed(err)
		}
		g.hold(client, storeHold)
		return false, 0 // this one was wrong, and is answered so
	}
	if wait > 0 {
		g.hold(client, wait)
	}
	return false, wait
}

// gate reports whether secret (its digest) was found from client within
// knownFor and, if not, how long client must still wait.
func (g *Guesses) gate(client string, digest [32]byte) (wait time.Duration, known bool) {
	g.mu.Lock()
	at, ok := g.known[client][digest]
	g.mu.Unlock()
	if ok && g.now().Sub(at) < knownFor {
		return 0, true
	}
	return g.held(client), false
}

// take waits for client's turn, until ctx ends (ok false); release gives
// the turn to the next.
func (g *Guesses) take(ctx context.Context, client string) (release func(), ok bool) {
	g.mu.Lock()
	t := g.turns[client]
	if t == nil {
		t = &turn{ch: make(chan struct{}, 1)}
		g.turns[client] = t
	}
	t.users++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if t.users--; t.users == 0 {
			delete(g.turns, client)
		}
	}
	select {
	case t.ch <- struct{}{}:
		return func() { <-t.ch; leave() }, true
	case <-ctx.Done():
		leave()
		return nil, false
	}
}

// held is how long client must still wait, as this replica last heard.
func (g *Guesses) held(client string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	until, ok := g.out[client]
	if !ok {
		return 0
	}
	wait := until.Sub(g.now())
	if wait <= 0 {
		delete(g.out, client)
		return 0
	}
	return wait
}

// hold marks client out of guesses for wait, or for longer if it was
// already: a store that failed (storeHold) shortens no wait the budget
// gave.
func (g *Guesses) hold(client string, wait time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if len(g.out) >= maxOut {
		for c, until := range g.out {
			if !until.After(now) {
				delete(g.out, c)
			}
		}
		// Room for an eighth more, so the sweep above runs once in that
		// many holds, not on each (forgetting a client costs it a read of
		// the store, no more).
		for c := range g.out {
			if len(g.out) < maxOut-maxOut/8 {
				break
			}
			delete(g.out, c)
		}
	}
	if until := now.Add(wait); until.After(g.out[client]) {
		g.out[client] = until
	}
}

// remember notes that secret (its digest) was found from client.
func (g *Guesses) remember(client string, digest [32]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	seen := g.known[client]
	if seen == nil {
		if len(g.known) >= maxOut {
			for c := range g.known {
				delete(g.known, c) // forgetting one only stops it passing a hold
				break
			}
		}
		seen = map[[32]byte]time.Time{}
		g.known[client] = seen
	}
	if _, ok := seen[digest]; !ok && len(seen) >= maxKnown {
		for d := range seen {
			delete(seen, d)
			break
		}
	}
	seen[digest] = now
}
