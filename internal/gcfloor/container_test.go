package gcfloor

import (
	"errors"
	"math"
	"runtime/debug"
	"testing"
)

// TestTheSoftLimitStaysInsideTheContainer: in a container whose memory
// limit (100 MiB here) is under the floor's soft limit (twice the 64 MiB
// floor), the soft limit is nine tenths of the container's, so the
// collector is pressed before the kernel kills the process; with GOGC
// set, that share alone is set; a GOMEMLIMIT in the environment, or a
// container that reports no limit, caps nothing. Before, the soft limit
// was 128 MiB in a 100 MiB container.
func TestTheSoftLimitStaysInsideTheContainer(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	const container = 100 << 20
	limited := func() (uint64, error) { return container, nil }
	none := func() (uint64, error) { return 0, errors.New("memory is not limited") }
	want := int64(container * ContainerShare)

	f := Server(func(string) string { return "" }, limited)
	if got := debug.SetMemoryLimit(-1); f == nil || got != want {
		f.Stop()
		t.Fatalf("floor in a container: soft limit %d MiB; want %d MiB", got>>20, want>>20)
	}
	f.Stop()

	if f := Server(func(k string) string { return map[string]string{"GOGC": "100"}[k] }, limited); f != nil {
		f.Stop()
		t.Fatal("a floor was started with GOGC set")
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != want {
		t.Fatalf("GOGC set in a container: soft limit %d MiB; want %d MiB", got>>20, want>>20)
	}

	f = Server(func(string) string { return "" }, none)
	if got := debug.SetMemoryLimit(-1); f == nil || got != 2*ServerFloor {
		f.Stop()
		t.Fatalf("floor with no container limit: soft limit %d MiB; want twice the floor", got>>20)
	}
	f.Stop()

	debug.SetMemoryLimit(1 << 30) // as GOMEMLIMIT=1GiB would have set it
	f = Server(func(k string) string { return map[string]string{"GOMEMLIMIT": "1GiB"}[k] }, limited)
	if got := debug.SetMemoryLimit(-1); f == nil || got != 1<<30 {
		f.Stop()
		t.Fatalf("GOMEMLIMIT set: soft limit %d MiB; want the 1024 MiB set", got>>20)
	}
	f.Stop()
}
