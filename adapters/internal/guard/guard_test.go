package guard

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

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
	mem := NewMemory()
	mem.now = func() time.Time { return now }
	g := NewGuesses(Limiter{Budget: mem, Key: WrongTokenKey, Limit: core.Limit{Rate: 1, Per: time.Second, Burst: 2}}, nil)
	g.now = mem.now
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
	g := NewGuesses(Limiter{Budget: f, Key: WrongTokenKey, Limit: WrongTokenLimit}, func(err error) { heard = append(heard, err) })
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
	g := NewGuesses(Limiter{Budget: NewMemory(), Limit: WrongTokenLimit}, nil)
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
		if wait, err := (Limiter{Limit: WrongTokenLimit}).Spend(context.Background(), r); wait != 0 || err != nil {
			t.Fatalf("no budget: %s %v", wait, err)
		}
	}
}

func TestMemoryUntil(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := NewMemory()
	m.now = func() time.Time { return now }
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
