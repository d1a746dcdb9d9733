package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("ValuesAndLeases", testValues)
}

func testValues(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	if v, err := e.store.Value(ctx, "telegram:1:offset"); err != nil || v != "" {
		t.Fatalf("unset value: %q, %v", v, err)
	}
	if err := e.store.SetValue(ctx, "telegram:1:offset", "1042"); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if v, err := e.store.Value(ctx, "telegram:1:offset"); err != nil || v != "1042" {
		t.Fatalf("value after restart: %q, %v", v, err)
	}

	// Ten replicas race for one lease: exactly one gets it.
	var mu sync.Mutex
	var holders []string
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := string(rune('a' + i))
			ok, err := e.store.Lease(ctx, "telegram:1:poller", owner, time.Hour)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				holders = append(holders, owner)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(holders) != 1 {
		t.Fatalf("lease holders %v, want exactly one", holders)
	}
	holder, other := holders[0], "someone-else"
	if ok, err := e.store.Lease(ctx, "telegram:1:poller", holder, time.Hour); err != nil || !ok {
		t.Fatalf("the holder could not renew: %v, %v", ok, err)
	}
	// Releasing a lease one does not hold changes nothing.
	if err := e.store.Release(ctx, "telegram:1:poller", other); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.store.Lease(ctx, "telegram:1:poller", other, time.Hour); ok {
		t.Fatal("a lease held by another was taken")
	}
	if err := e.store.Release(ctx, "telegram:1:poller", holder); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.store.Lease(ctx, "telegram:1:poller", other, time.Hour); err != nil || !ok {
		t.Fatalf("a released lease could not be taken: %v, %v", ok, err)
	}
	// An expired lease is free. Expiry is the store's own clock, so wait
	// for a short one, bounded.
	if ok, _ := e.store.Lease(ctx, "short", "a", 20*time.Millisecond); !ok {
		t.Fatal("a free lease was refused")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := e.store.Lease(ctx, "short", "b", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired lease was never freed")
		}
	}
}

func init() {
	register("OnceAcrossReplicas", testOnce)
}

// testOnce: a platform's redelivery reaching two replicas is handled once.
func testOnce(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := e.store.Once(ctx, "slack:event:Ev01", time.Hour)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				firsts++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firsts != 1 {
		t.Fatalf("%d callers saw the key first, want 1", firsts)
	}
	e.restart()
	if ok, err := e.store.Once(ctx, "slack:event:Ev01", time.Hour); err != nil || ok {
		t.Fatalf("after a restart the key was new again: %v, %v", ok, err)
	}
	if ok, err := e.store.Once(ctx, "slack:event:Ev02", time.Hour); err != nil || !ok {
		t.Fatalf("another key: %v, %v", ok, err)
	}
	// An expired key is new again, and Purge drops it. Expiry runs on the
	// store's own clock, so wait for a short one, bounded.
	if ok, _ := e.store.Once(ctx, "short", 20*time.Millisecond); !ok {
		t.Fatal("a new key was refused")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := e.store.Once(ctx, "short", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired key never became new")
		}
	}
	if _, err := e.svc.Purge(ctx); err != nil {
		t.Fatal(err)
	}
}

func init() {
	register("ExpiringValues", testExpiringValues)
}

// testExpiringValues: a value set for a time (a console session) reads
// back until it lapses, across a restart; setting it again moves the
// expiry; deleting it, or a plain SetValue, ends the expiry's hold on it.
func testExpiringValues(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	if err := e.store.SetValueFor(ctx, "console:session:a", "alice", 0); err == nil {
		t.Fatal("a zero lifetime was accepted")
	}
	if v, _ := e.store.Value(ctx, "console:session:a"); v != "" {
		t.Fatalf("a refused set stored %q", v)
	}
	if err := e.store.SetValueFor(ctx, "console:session:a", "alice", time.Hour); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if v, err := e.store.Value(ctx, "console:session:a"); err != nil || v != "alice" {
		t.Fatalf("value after restart: %q, %v", v, err)
	}
	if err := e.store.DeleteValue(ctx, "console:session:a"); err != nil {
		t.Fatal(err)
	}
	if v, _ := e.store.Value(ctx, "console:session:a"); v != "" {
		t.Fatalf("a deleted value reads %q", v)
	}
	if err := e.store.DeleteValue(ctx, "never-set"); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}

	// A plain SetValue over an expiring one keeps it for good, and an
	// expiring set over a plain one replaces it.
	if err := e.store.SetValueFor(ctx, "k", "v1", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetValue(ctx, "k", "v2"); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetValueFor(ctx, "plain", "p1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, _ := e.store.Value(ctx, "plain"); v != "p1" {
		t.Fatalf("plain after an expiring set: %q", v)
	}

	// A short value lapses on the store's own clock; a renewed one does
	// not. Wait for the short one, bounded.
	if err := e.store.SetValueFor(ctx, "short", "s", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetValueFor(ctx, "renewed", "r", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetValueFor(ctx, "renewed", "r", time.Hour); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := e.store.Value(ctx, "short")
		if err != nil {
			t.Fatal(err)
		}
		if v == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expiring value never lapsed")
		}
	}
	if _, err := e.svc.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"short": "", "renewed": "r", "k": "v2", "plain": "p1"} {
		if v, err := e.store.Value(ctx, key); err != nil || v != want {
			t.Errorf("%s after purge: %q, %v; want %q", key, v, err, want)
		}
	}
}

func init() {
	register("ValuesRefuseLifetimesUnderAMillisecond", testValuesShortLifetimes)
}

// testValuesShortLifetimes: a lease or a key seen once lasts at least a
// millisecond, as an expiring value does; a shorter one (zero, negative)
// is refused as invalid and takes nothing, rather than being granted to
// every caller.
func testValuesShortLifetimes(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	for _, ttl := range []time.Duration{0, -time.Second, time.Microsecond} {
		if ok, err := e.store.Once(ctx, "slack:event:short", ttl); core.ErrorCode(err) != core.CodeInvalid || ok {
			t.Errorf("once for %s: %v, %v; want invalid", ttl, ok, err)
		}
		if ok, err := e.store.Lease(ctx, "poller:short", "a", ttl); core.ErrorCode(err) != core.CodeInvalid || ok {
			t.Errorf("lease by a for %s: %v, %v; want invalid", ttl, ok, err)
		}
		if ok, err := e.store.Lease(ctx, "poller:short", "b", ttl); core.ErrorCode(err) != core.CodeInvalid || ok {
			t.Errorf("lease by b for %s: %v, %v; want invalid", ttl, ok, err)
		}
	}
	// The refusals took nothing: the key is new, the lease free.
	if ok, err := e.store.Once(ctx, "slack:event:short", time.Hour); err != nil || !ok {
		t.Fatalf("once after refusals: %v, %v; want the key new", ok, err)
	}
	if ok, err := e.store.Once(ctx, "slack:event:short", time.Hour); err != nil || ok {
		t.Fatalf("once again: %v, %v; want the key seen", ok, err)
	}
	if ok, err := e.store.Lease(ctx, "poller:short", "b", time.Hour); err != nil || !ok {
		t.Fatalf("lease after refusals: %v, %v; want it free", ok, err)
	}
	if ok, err := e.store.Lease(ctx, "poller:short", "a", time.Hour); err != nil || ok {
		t.Fatalf("lease held by b taken by a: %v, %v", ok, err)
	}
}
