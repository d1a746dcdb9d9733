// Package gcfloor keeps Go's garbage collector from running while the
// heap is small.
//
// With the default GOGC=100 the collector runs each time the heap doubles
// from what survived the last cycle. A bridge with a thousand parked waits
// keeps 8 to 15 MB live, so a burst of a thousand answers and wake-ups
// (about 27 MB of short-lived garbage) starts two or three cycles, each
// some 10 ms of marking with a quarter of the CPU and assists taken from
// the goroutines that allocate; those cycles are where a burst's slowest
// answers come from (BENCHMARKS.md, the wake-up burst). A floor lets the
// heap grow to a fixed size before the collector runs, whatever is live:
// after each cycle, GOGC is raised so that the next cycle starts at the
// floor, and left as it was once the live heap alone is past half of it.
// A large bridge (tens of thousands of open questions) is thus collected as
// before; a small one uses up to the floor in memory and collects a few
// times less often.
//
// GOGC is set after a cycle, from what it left live; the goal of the cycle
// after is set by the runtime as soon as it ends, from the new live heap
// and the GOGC set for the old one. A heap that grew between two cycles
// would meet a goal many times the floor until GOGC is set again (a
// test saw 420 MiB with a 64 MiB floor), so a soft memory limit goes with
// it, set with GOGC: twice the floor, or four times what is live, which
// bounds the heap in between and stays clear of GOGC's own goal. Where the
// environment sets GOMEMLIMIT, that limit is left as it is.
//
// In a container with a memory limit (a cgroup's memory.max), the soft
// limit is never set above nine tenths of it (ContainerShare): four times
// a large live heap would otherwise sit past the point where the kernel
// kills the process, and the collector would never be pressed before it.
// With GOGC set, and no floor, that share alone is the soft limit.
package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Floor is what Start keeps the heap's goal at or above, in bytes.
type Floor struct {
	floor uint64
	base  int   // the GOGC in effect when Start was called
	limit int64 // the memory limit then; -1 if Start leaves it alone
	// ceiling caps the limit tune sets (the container's share); 0: none.
	ceiling int64
	// mu orders tune and Stop: a cycle's tune that runs as Stop does sets
	// nothing after Stop has put the settings back.
	mu      sync.Mutex
	stopped bool
	sample  []metrics.Sample
	// tuned counts the cycles after which the goal was set, for tests.
	tuned atomic.Int64
}

// The runtime metrics the goal is computed from: the heap the last cycle
// marked live, and the stacks and globals it scanned, which the pacer
// counts with the heap when it sets the next goal (goal = live + (live +
// stacks + globals) × GOGC/100).
var goalMetrics = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// active is whether a Floor runs: the collector's settings are the
// process's, so one at a time.
var active atomic.Bool

// Start keeps the heap's goal at floor bytes or more from now on, until
// Stop, with a memory limit as the package says, at most ceiling bytes
// when ceiling > 0, unless keepLimit. It does nothing (and returns nil)
// where the collector is off (GOGC=off), floor is 0 or a Floor already
// runs; the GOGC in effect is the least the floor ever sets.
func Start(floor uint64, keepLimit bool, ceiling int64) *Floor {
	if floor == 0 || !active.CompareAndSwap(false, true) {
		return nil
	}
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		active.Store(false)
		return nil
	}
	f := &Floor{floor: floor, base: base, limit: -1, ceiling: max(ceiling, 0)}
	if !keepLimit {
		f.limit = debug.SetMemoryLimit(-1)
	}
	for _, name := range goalMetrics {
		f.sample = append(f.sample, metrics.Sample{Name: name})
	}
	f.tune()
	f.arm()
	return f
}

// sentinel is garbage as soon as it is made: its cleanup runs after the
// next cycle, which is when the live heap is known anew. It is larger than
// the runtime's tiny allocations, whose cleanups may never run.
type sentinel [64]byte

// arm sets the goal again after the next cycle, and so on until Stop.
func (f *Floor) arm() {
	s := new(sentinel)
	runtime.AddCleanup(s, func(f *Floor) {
		if f.tune() {
			f.arm()
		}
	}, f)
}

// tune sets GOGC so that the next cycle starts when the heap reaches the
// floor, and reports whether it did (not once stopped).
func (f *Floor) tune() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return false
	}
	metrics.Read(f.sample)
	live := f.sample[0].Value.Uint64()
	roots := f.sample[1].Value.Uint64() + f.sample[2].Value.Uint64()
	debug.SetGCPercent(Percent(f.floor, live, roots, f.base))
	if f.limit >= 0 {
		limit := int64(max(2*f.floor, 4*(live+roots)))
		if f.ceiling > 0 {
			limit = min(limit, f.ceiling)
		}
		debug.SetMemoryLimit(limit)
	}
	f.tuned.Add(1)
	return true
}

// Percent is the GOGC that puts the next cycle's start at floor, with live
// bytes of heap live and roots bytes of stacks and globals, and never
// below base: base itself once live is past about floor ÷ (1 +
// base/100), half the floor at GOGC=100. Before the first cycle nothing
// is known live, and it is base too: a percent from a heap of nothing
// would have no cycle ever start, and so none to set it again after.
func Percent(floor, live, roots uint64, base int) int {
	if live == 0 || live >= floor {
		return base
	}
	return max(base, int((floor-live)*100/(live+roots)))
}

// Stop puts GOGC and the memory limit back as they were at Start; a nil
// Floor, or one stopped already, does nothing.
func (f *Floor) Stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	debug.SetGCPercent(f.base)
	if f.limit >= 0 {
		debug.SetMemoryLimit(f.limit)
	}
	active.Store(false)
}

// ServerFloor is the floor askbridge serve keeps: 64 MiB, a few times what
// a bridge with a thousand parked waits keeps live, and little for a
// server to hold.
const ServerFloor = 64 << 20

// ContainerShare is the part of a container's memory limit the soft
// limit may reach: the rest is for what the collector does not count
// (the runtime's own, cgo, the kernel's page tables) and for the time
// the collector needs to catch up.
const ContainerShare = 0.9

// Server starts the floor askbridge serve keeps, unless the environment
// sets GOGC: whoever sets it has chosen how the collector runs. A
// GOMEMLIMIT set there is kept (below the floor, the collector runs at
// it). Otherwise, where container reports a memory limit (the cgroup's,
// in serve), the soft limit stays under ContainerShare of it, with GOGC
// set too; a container that reports none (an error) caps nothing.
func Server(getenv func(string) string, container func() (uint64, error)) *Floor {
	var ceiling int64
	if getenv("GOMEMLIMIT") == "" && container != nil {
		if n, err := container(); err == nil && n > 0 && n <= math.MaxInt64 {
			ceiling = int64(float64(n) * ContainerShare)
		}
	}
	if getenv("GOGC") != "" {
		if ceiling > 0 {
			debug.SetMemoryLimit(ceiling)
		}
		return nil
	}
	return Start(ServerFloor, getenv("GOMEMLIMIT") != "", ceiling)
}
