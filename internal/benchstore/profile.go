package benchstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// ProfileDir is the environment variable that names the directory the
// bursts' profiles are written to; unset, nothing is profiled.
const ProfileDir = "ASKBRIDGE_BENCH_PROFILE"

// Profile is the CPU, block and mutex profiles of a process during one
// burst, written to the directory ProfileDir names as
// <benchmark>.<burst>.cpu.pprof, .block.pprof, .mutex.pprof and
// .allocs.pprof (with .allocs-before.pprof, its -base: what the burst
// allocated is the difference), one set
// per burst since the process started (read them with `go tool pprof
// <test binary> <files>`, which merges the bursts' files it is given): what
// the process computed, and what its goroutines waited for, while the
// bursts ran. One burst is a few hundred milliseconds, too few samples to
// read alone; -benchtime 20x gives twenty.
type Profile struct {
	dir, name string
	cpu       *os.File
}

// bursts counts the profiled bursts per name, so that each burst's files
// have names of their own. Benchmarks run one at a time.
var bursts = map[string]int{}

// StartProfile starts profiling into dir under name (a benchmark's name;
// a bridge serving a benchmark from its own process adds ".bridge"):
// every blocking event and every contended lock is sampled.
func StartProfile(dir, name string) (*Profile, error) {
	name = strings.NewReplacer("/", "-", "=", "").Replace(name)
	bursts[name]++
	p := &Profile{dir: dir, name: fmt.Sprintf("%s.%d", name, bursts[name])}
	if err := p.write("allocs", "allocs-before"); err != nil {
		return nil, err
	}
	f, err := os.Create(p.path("cpu"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	p.cpu = f
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	return p, nil
}

// startProfile is StartProfile for b if ProfileDir is set (nil otherwise).
func startProfile(b *testing.B) *Profile {
	dir := os.Getenv(ProfileDir)
	if dir == "" {
		return nil
	}
	p, err := StartProfile(dir, b.Name())
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func (p *Profile) path(kind string) string { return filepath.Join(p.dir, p.name+"."+kind+".pprof") }

// Stop writes the profiles and stops sampling; a nil Profile does nothing.
func (p *Profile) Stop() error {
	if p == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.cpu.Close()
	for _, kind := range []string{"block", "mutex", "allocs"} {
		err = errors.Join(err, p.write(kind, kind))
	}
	runtime.SetBlockProfileRate(0)
	runtime.SetMutexProfileFraction(0)
	return err
}

// write writes the profile of kind to the file named as.
func (p *Profile) write(kind, as string) error {
	f, err := os.Create(p.path(as))
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup(kind).WriteTo(f, 0), f.Close())
}
