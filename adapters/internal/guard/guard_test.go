package guard

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/membudget"
)

// testKey and testLimit are a budget of guesses as the API keeps it.
const testKey = "auth:bearer:"

var testLimit = core.Limit{Rate: 30, Per: time.Minute, Burst: 30}

// failing is a budget whose store is down.
type failing struct{ calls int }

func (f *failing) Spend(context.Context, string, core.Limit) (time.Duration, error) {
	f.calls++
	return 0, errors.New("store down")
}

func (f *failing) Until(context.Context, string, core.Limit) (time.Duration, error) {
	return 0, errors.New("store down")
}

func TestGuessesSpendOnWrongSecretsOnly(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	mem := membudget.New(clock)
	g := NewGuesses(Limiter{Budget: mem, Key: testKey, Limit: core.Limit{Rate: 1, Per: time.Second, Burst: 2}, Now: clock}, nil)
	r := httptest.NewRequest("GET", "/v1/x", nil)
	r.RemoteAddr = "203.0.113.9:5000"
	looked := 0
	right := func() bool { looked++; return true }
	wrong := func() bool { looked++; return false }

	for range 10 {
		if ok, wait := g.Check(r, "agent secret", right); !ok || wait != 0 {
			t.Fatalf("a right secret: %v %s", ok, wait)
		}
	}
	for i := range 2 {
		if ok, wait := g.Check(r, "guess", wrong); ok || wait != 0 {
			t.Fatalf("wrong secret %d within the burst: %v %s", i, ok, wait)
		}
	}
	if ok, wait := g.Check(r, "guess", wrong); ok || wait != time.Second {
		t.Fatalf("a wrong secret past the burst: %v %s, want a wait of 1s", ok, wait)
	}
	looked = 0
	if ok, wait := g.Check(r, "a right guess", right); ok || wait != time.Second || looked != 0 {
		t.Fatalf("a right secret never found from a client out of guesses: %v %s, looked up %d times", ok, wait, looked)
	}
	// A secret already found from this client tells a guesser nothing:
	// the agent beside a process presenting a rotated token keeps working.
	if ok, wait := g.Check(r, "agent secret", right); !ok || wait != 0 || looked != 1 {
		t.Fatalf("a secret found before from a client out of guesses: %v %s, looked up %d times", ok, wait, looked)
	}
	other := httptest.NewRequest("GET", "/v1/x", nil)
	other.RemoteAddr = "198.51.100.1:5000"
	if ok, _ := g.Check(other, "another agent", right); !ok {
		t.Fatal("another client was held")
	}
	now = now.Add(time.Second)
	if ok, wait := g.Check(r, "a right guess", right); !ok || wait != 0 {
		t.Fatalf("after the wait: %v %s", ok, wait)
	}
}

func TestGuessesHoldAClientWhenTheStoreFails(t *testing.T) {
	f := &failing{}
	var heard []error
	g := NewGuesses(Limiter{Budget: f, Key: testKey, Limit: testLimit}, func(err error) { heard = append(heard, err) })
	r := httptest.NewRequest("GET", "/v1/x", nil)
	if ok, wait := g.Check(r, "guess", func() bool { return false }); ok || wait != 0 {
		t.Fatalf("a wrong secret the store could not count: %v %s, want a plain refusal", ok, wait)
	}
	if ok, wait := g.Check(r, "guess 2", func() bool { return true }); ok || wait <= 0 || wait > storeHold {
		t.Fatalf("the next try: %v %s, want held up to %s", ok, wait, storeHold)
	}
	if f.calls != 1 || len(heard) != 1 {
		t.Fatalf("%d spends, %d errors heard", f.calls, len(heard))
	}
}

func TestHoldIsBounded(t *testing.T) {
	g := NewGuesses(Limiter{Budget: membudget.New(nil), Limit: testLimit}, nil)
	for i := range maxOut + 10 {
		g.hold(string(rune(i)), time.Hour)
	}
	if len(g.out) > maxOut {
		t.Fatalf("%d clients held, at most %d", len(g.out), maxOut)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want string
	}{{time.Millisecond, "1"}, {time.Second, "1"}, {1500 * time.Millisecond, "2"}, {2 * time.Second, "2"}, {0, "1"}} {
		if got := RetryAfter(c.wait); got != c.want {
			t.Errorf("RetryAfter(%s) = %s, want %s", c.wait, got, c.want)
		}
	}
}

func TestLimiterWithoutABudget(t *testing.T) {
	r := httptest.NewRequest("POST", "/signin", nil)
	for range 100 {
		if wait, err := (Limiter{Limit: testLimit}).Spend(context.Background(), r); wait != 0 || err != nil {
			t.Fatalf("no budget: %s %v", wait, err)
		}
	}
}

func TestMemoryUntil(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := membudget.New(func() time.Time { return now })
	l := core.Limit{Rate: 1, Per: time.Second}
	ctx := context.Background()
	if w, _ := m.Until(ctx, "k", l); w != 0 {
		t.Fatalf("a fresh budget waits %s", w)
	}
	if w, _ := m.Spend(ctx, "k", l); w != 0 {
		t.Fatalf("the first spend waits %s", w)
	}
	if w, _ := m.Until(ctx, "k", l); w != time.Second {
		t.Fatalf("Until after the spend: %s", w)
	}
	if w, _ := m.Spend(ctx, "k", l); w != time.Second {
		t.Fatalf("the second spend: %s", w)
	}
	if _, err := m.Spend(ctx, "k", core.Limit{}); err == nil {
		t.Fatal("a limit of nothing was taken")
	}
}

// slowBudget is a store whose Spend waits to be told what the budget
// says, so a test can send another request while a wrong secret is
// being counted.
type slowBudget struct {
	entered chan struct{}
	says    chan time.Duration
}

func (b *slowBudget) Spend(context.Context, string, core.Limit) (time.Duration, error) {
	b.entered <- struct{}{}
	return <-b.says, nil
}

func (b *slowBudget) Until(context.Context, string, core.Limit) (time.Duration, error) {
	return 0, nil
}

// TestNoSecretIsLookedAtWhileAWrongOneIsCounted: a client is found out of
// guesses only when its wrong secret is counted, and a guesser that
// sends its guesses at once must not have them looked at meanwhile (a
// right one let through would tell it which guess was right, whatever
// the budget said). A secret sent while a wrong one from the same client
// is being counted waits for the count: refused unlooked-at when the
// client turned out to be out, looked at as usual when it was not.
func TestNoSecretIsLookedAtWhileAWrongOneIsCounted(t *testing.T) {
	b := &slowBudget{entered: make(chan struct{}), says: make(chan time.Duration)}
	g := NewGuesses(Limiter{Budget: b, Key: testKey, Limit: testLimit}, nil)
	r := httptest.NewRequest("GET", "/v1/x", nil)
	wrong := func() bool { return false }

	for _, c := range []struct {
		name   string
		says   time.Duration // what the budget says of the wrong secret
		wantOK bool
	}{
		{"out of guesses", 2 * time.Second, false},
		{"with guesses left", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g.mu.Lock()
			clear(g.out)
			g.mu.Unlock()
			counted := make(chan struct{})
			go func() {
				defer close(counted)
				g.Check(r, "guess", wrong)
			}()
			<-b.entered // the wrong secret is being counted
			var looked atomic.Bool
			type result struct {
				ok   bool
				wait time.Duration
			}
			done := make(chan result, 1)
			go func() {
				ok, wait := g.Check(r, "a right guess", func() bool { looked.Store(true); return true })
				done <- result{ok, wait}
			}()
			var res result
			answered := false
			select {
			case res = <-done:
				answered = true
				t.Error("a secret was answered while a wrong one from its client was being counted")
			case <-time.After(50 * time.Millisecond):
			}
			b.says <- c.says
			<-counted
			if !answered {
				select {
				case res = <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("the right guess was never answered")
				}
			}
			if res.ok != c.wantOK || (res.wait > 0) == c.wantOK || looked.Load() != c.wantOK {
				t.Fatalf("the right guess: ok %v, wait %s, looked at %v; want ok %v", res.ok, res.wait, looked.Load(), c.wantOK)
			}
		})
	}
}

// flaky is a store that fails while down.
type flaky struct {
	core.Budget
	down bool
}

func (f *flaky) Spend(ctx context.Context, key string, l core.Limit) (time.Duration, error) {
	if f.down {
		return 0, errors.New("store down")
	}
	return f.Budget.Spend(ctx, key, l)
}

// TestAStoreFailureNeverShortensAHold: a client out of guesses for a
// minute stays out for the minute, even when a secret that passes its
// hold (one found from it before, since rotated away) meets a store that
// is down, which holds a client for a second only.
func TestAStoreFailureNeverShortensAHold(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	f := &flaky{Budget: membudget.New(clock)}
	g := NewGuesses(Limiter{Budget: f, Key: testKey, Limit: core.Limit{Rate: 1, Per: time.Minute, Burst: 1}, Now: clock}, nil)
	r := httptest.NewRequest("GET", "/v1/x", nil)
	right := func() bool { return true }
	wrong := func() bool { return false }

	if ok, _ := g.Check(r, "old secret", right); !ok {
		t.Fatal("the old secret, before it was rotated")
	}
	g.Check(r, "guess 1", wrong)
	if _, wait := g.Check(r, "guess 2", wrong); wait != time.Minute {
		t.Fatalf("out of guesses: wait %s, want a minute", wait)
	}
	f.down = true
	g.Check(r, "old secret", wrong) // passes the hold, is wrong now, and is not counted
	now = now.Add(2 * storeHold)
	if ok, wait := g.Check(r, "a right guess", right); ok || wait != time.Minute-2*storeHold {
		t.Fatalf("a right guess %s later: ok %v, wait %s; want held for the rest of the minute", 2*storeHold, ok, wait)
	}
}

// TestAFullHoldListIsSweptRarely: once as many clients are held as are
// remembered, the next hold frees room for many more, not for one, so a
// guesser with many addresses does not make every hold a sweep of them
// all under the lock every check takes.
func TestAFullHoldListIsSweptRarely(t *testing.T) {
	g := NewGuesses(Limiter{Budget: membudget.New(nil), Key: "k:", Limit: core.Limit{Rate: 1, Per: time.Second}}, nil)
	for i := range maxOut {
		g.out[strconv.Itoa(i)] = g.now().Add(time.Hour)
	}
	g.hold("one more", time.Hour)
	if n := len(g.out); n > maxOut-maxOut/8+1 {
		t.Fatalf("after a hold on a full list, %d clients are held; want room for %d more", n, maxOut/8)
	}
	if _, ok := g.out["one more"]; !ok {
		t.Fatal("the client just held is not held")
	}
}
