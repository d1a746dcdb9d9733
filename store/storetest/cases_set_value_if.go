package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

func init() {
	register("SetValueIfIsOneCompareAndSet", testSetValueIf)
}

// testSetValueIf: SetValueIf sets a value only over the one its caller
// read, in one step: of replicas racing from one value exactly one
// sets it, and replicas each rereading and trying again until they have
// added their part lose none of it (a read and a SetValue would). A key
// holding the value asked for already says so (a call sent again); one
// holding another changes nothing; an empty value is refused.
func testSetValueIf(t *testing.T, h Harness) {
	e := newEnv(t, h)
	ctx := t.Context()
	stores := []core.Store{e.store}
	if h.Replica != nil {
		stores = append(stores, h.Replica(t, e.store))
	}
	const key = "core:cards"
	set := func(st core.Store, old, val string) bool {
		t.Helper()
		ok, err := st.SetValueIf(ctx, key, old, val)
		if err != nil {
			t.Fatalf("set %q over %q: %v", val, old, err)
		}
		return ok
	}
	mustHold := func(want string) {
		t.Helper()
		if v, err := e.store.Value(ctx, key); err != nil || v != want {
			t.Fatalf("the key holds %q, %v; want %q", v, err, want)
		}
	}

	if ok, err := e.store.SetValueIf(ctx, key, "", ""); core.ErrorCode(err) != core.CodeInvalid || ok {
		t.Fatalf("an empty value: %v, %v; want invalid", ok, err)
	}
	if set(e.store, "v0", "v1") {
		t.Fatal("set over a value the key does not hold (it holds none)")
	}
	mustHold("")
	if !set(e.store, "", "v0") {
		t.Fatal("a key holding nothing was not set over nothing")
	}
	mustHold("v0")
	if !set(e.store, "", "v0") {
		t.Fatal("a key holding the value asked for already: not told so")
	}
	if set(e.store, "", "v9") {
		t.Fatal("set over nothing while the key holds a value")
	}
	mustHold("v0")

	// Ten replicas race from the value they all read: exactly one sets it.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var winners []string
	for i := range 10 {
		wg.Go(func() {
			val := fmt.Sprintf("w%d", i)
			ok, err := stores[i%len(stores)].SetValueIf(ctx, key, "v0", val)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				winners = append(winners, val)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("set by %v; want exactly one", winners)
	}
	mustHold(winners[0])

	// Ten replicas each add their name, reading again after a lost race:
	// every name is there once.
	for i := range 10 {
		wg.Go(func() {
			st, name := stores[i%len(stores)], fmt.Sprintf("r%d", i)
			for {
				cur, err := st.Value(ctx, key)
				if err != nil {
					t.Error(err)
					return
				}
				ok, err := st.SetValueIf(ctx, key, cur, cur+","+name)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					return
				}
			}
		})
	}
	wg.Wait()
	v, err := e.store.Value(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Split(v, ",")[1:]
	slices.Sort(names)
	if want := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"}; !slices.Equal(names, want) {
		t.Fatalf("the names added: %v; want each of %v once", names, want)
	}
	e.restart()
	mustHold(v)

	// An expiring value is compared as Value reads it, and the value set
	// over it lasts: set over one for an hour, and over one that lapsed
	// (on the store's own clock, so waited for, bounded) as over none.
	if err := e.store.SetValueFor(ctx, key, "lease-like", time.Hour); err != nil {
		t.Fatal(err)
	}
	if !set(e.store, "lease-like", "kept") {
		t.Fatal("not set over an expiring value it holds")
	}
	e.restart()
	mustHold("kept")
	if err := e.store.SetValueFor(ctx, key, "short", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := e.store.Value(ctx, key)
		if err != nil {
			t.Fatal(err) // a failing read is no lapse
		}
		if v == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expiring value never lapsed")
		}
	}
	if set(e.store, "short", "late") {
		t.Fatal("set over a value that lapsed, as if it were still held")
	}
	if !set(e.store, "", "after") {
		t.Fatal("not set over a value that lapsed, as over none")
	}
	mustHold("after")
}
