package benchstore

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// profile is the CPU, block and mutex profiles of the process during one
// burst, written to the directory ASKBRIDGE_BENCH_PROFILE names as
// <benchmark>.cpu.pprof, .block.pprof and .mutex.pprof (read them with
// `go tool pprof <test binary> <file>`): what the bridge computed, and
// what its goroutines waited for, while the burst ran.
type profile struct {
	dir, name string
	cpu       *os.File
}

// startProfile starts profiling if ASKBRIDGE_BENCH_PROFILE is set (nil
// otherwise): every blocking event and every contended lock is sampled.
func startProfile(b *testing.B) *profile {
	dir := os.Getenv("ASKBRIDGE_BENCH_PROFILE")
	if dir == "" {
		return nil
	}
	p := &profile{dir: dir, name: strings.NewReplacer("/", "-", "=", "").Replace(b.Name())}
	f, err := os.Create(p.path("cpu"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	p.cpu = f
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	return p
}

func (p *profile) path(kind string) string { return filepath.Join(p.dir, p.name+"."+kind+".pprof") }

// stop writes the profiles and stops sampling.
func (p *profile) stop(b *testing.B) {
	if p == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.cpu.Close(); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"block", "mutex"} {
		f, err := os.Create(p.path(kind))
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup(kind).WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.SetBlockProfileRate(0)
	runtime.SetMutexProfileFraction(0)
}
