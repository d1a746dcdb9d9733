package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		floor, live, roots uint64
		base, want         int
	}{
		{64 * mb, 8 * mb, 0, 100, 700},       // the next cycle at 8 × 8 MB = 64 MB
		{64 * mb, 16 * mb, 0, 100, 300},      // at 4 × 16 MB
		{64 * mb, 12 * mb, 2 * mb, 100, 371}, // 12 + 14 × 3.71 = 64 MB
		{64 * mb, 32 * mb, 0, 100, 100},      // half the floor: GOGC as it was
		{64 * mb, 200 * mb, 0, 100, 100},     // past the floor: as it was
		{64 * mb, 16 * mb, 0, 400, 400},      // never below the GOGC set
		{64 * mb, 0, 0, 100, 100},            // no cycle yet: as it was
	} {
		if got := Percent(c.floor, c.live, c.roots, c.base); got != c.want {
			t.Errorf("Percent(%d MB, %d MB, %d MB, %d) = %d, want %d", c.floor/mb, c.live/mb, c.roots/mb, c.base, got, c.want)
		}
	}
}

// TestStartTunesAfterEachCycle: once started, each collection sets GOGC
// from the heap it left live, so that the next starts at the floor; Stop
// puts GOGC back.
func TestStartTunesAfterEachCycle(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const floor = 1 << 30 // far above this test's live heap
	f := Start(floor, false, 0)
	if f == nil {
		t.Fatal("Start returned nil with GOGC=100")
	}
	defer f.Stop()
	before := f.tuned.Load()
	deadline := time.Now().Add(10 * time.Second)
	for f.tuned.Load() < before+3 {
		if time.Now().After(deadline) {
			t.Fatalf("tuned %d times after the collections since Start; want 3 more", f.tuned.Load()-before)
		}
		runtime.GC()
		runtime.Gosched()
	}
	// The percent now in effect is the floor's for the heap left live.
	got := debug.SetGCPercent(-1)
	debug.SetGCPercent(got)
	if got <= 100 {
		t.Fatalf("GOGC %d after a cycle with a %d MB floor; want it raised", got, floor>>20)
	}
	if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 {
		t.Fatal("no memory limit set with the floor")
	}
	f.Stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC %d after Stop; want 100 back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("memory limit %d after Stop; want none, as before", got)
	}
}

// TestStartLeavesTheCollectorOff: with GOGC=off there is nothing to tune.
func TestStartLeavesTheCollectorOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if f := Start(1<<30, false, 0); f != nil {
		f.Stop()
		t.Fatal("Start tuned a collector that is off")
	}
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC %d; want off left as it was", got)
	}
}

// TestServerLeavesAGOGCSetInTheEnvironment: GOGC set is the operator's
// choice, floor or not.
func TestServerLeavesAGOGCSetInTheEnvironment(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if f := Server(func(k string) string { return map[string]string{"GOGC": "100"}[k] }, nil); f != nil {
		f.Stop()
		t.Fatal("a floor was started with GOGC set")
	}
	f := Server(func(string) string { return "" }, nil)
	if f == nil || f.floor != ServerFloor || f.limit < 0 {
		t.Fatalf("Server without GOGC: %+v; want the server floor, with a memory limit", f)
	}
	f.Stop()
	f = Server(func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] }, nil)
	if f == nil || f.limit >= 0 {
		t.Fatalf("Server with GOMEMLIMIT: %+v; want the floor, and that limit left alone", f)
	}
	f.Stop()
}

// TestTheHeapStaysNearTheFloor: with the floor kept, a stream of garbage
// many times the floor is still collected, and the heap's goal stays
// within what the package promises, twice the floor or four times what
// the last cycle left live (with the stacks and globals it scanned),
// rather than growing with the garbage. The second bound matters on a
// loaded machine: a slow mark phase counts as live what the loop
// allocates meanwhile, so the live heap can pass half the floor, where the
// floor steps back to Go's own pace.
func TestTheHeapStaysNearTheFloor(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const floor = 64 << 20
	f := Start(floor, false, 0)
	defer f.Stop()
	sample := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	for _, name := range goalMetrics {
		sample = append(sample, metrics.Sample{Name: name})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var sink [][]byte
	highest := uint64(0)
	for i := range 16 << 10 { // 1 GiB in 64 KiB pieces, 16 MiB kept at a time
		if len(sink) == 256 {
			sink = sink[:0]
		}
		sink = append(sink, make([]byte, 64<<10))
		if i%256 == 0 {
			metrics.Read(sample)
			goal, live := sample[0].Value.Uint64(), sample[1].Value.Uint64()+sample[2].Value.Uint64()+sample[3].Value.Uint64()
			highest = max(highest, goal)
			if bound := max(2*floor, 4*live); goal > bound {
				t.Fatalf("the heap's goal reached %d MiB with a %d MiB floor and %d MiB live", goal>>20, floor>>20, live>>20)
			}
		}
	}
	runtime.KeepAlive(sink)
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n < 4 {
		t.Fatalf("%d collections over 1 GiB of garbage with a %d MiB floor (goal up to %d MiB, tuned %d); want several", n, floor>>20, highest>>20, f.tuned.Load())
	}
}

// TestOneFloorAtATime: the collector's settings are the process's, so a
// second Start while a Floor runs does nothing, and Start works again
// once it stops.
func TestOneFloorAtATime(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	first := Start(1<<30, false, 0)
	if first == nil {
		t.Fatal("no Floor started")
	}
	if second := Start(1<<30, false, 0); second != nil {
		second.Stop()
		first.Stop()
		t.Fatal("a second Floor started while the first ran")
	}
	first.Stop()
	first.Stop() // again: nothing
	again := Start(1<<30, false, 0)
	if again == nil {
		t.Fatal("no Floor started after the first stopped")
	}
	again.Stop()
}
