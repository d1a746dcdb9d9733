package procmem

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestResident: touching 32 MB of new memory shows in the anonymous
// pages, and the test binary's own pages in the file-backed ones.
func TestResident(t *testing.T) {
	if runtime.GOOS != "linux" {
		if anon, file := Resident(); anon != 0 || file != 0 {
			t.Fatalf("off Linux: %d, %d; want 0, 0", anon, file)
		}
		return
	}
	before, file := Resident()
	if file == 0 {
		t.Fatal("no file-backed pages: the status file was not read")
	}
	block := make([]byte, 32<<20)
	for i := 0; i < len(block); i += 4096 {
		block[i] = 1
	}
	after, _ := Resident()
	runtime.KeepAlive(block)
	if after-before < 16<<20 {
		t.Fatalf("anonymous pages grew by %d B after touching 32 MB", after-before)
	}
}

// TestCPU: spinning for a while shows in the process's CPU time, and no
// more than the wall time that passed times the cores.
func TestCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		if c := CPU(); c != 0 {
			t.Fatalf("off Linux: %v; want 0", c)
		}
		return
	}
	before, start := CPU(), time.Now()
	x := 0
	for CPU()-before < 50*time.Millisecond && time.Since(start) < 5*time.Second {
		for i := range 1_000_000 {
			x ^= i
		}
	}
	used, wall := CPU()-before, time.Since(start)
	runtime.KeepAlive(x)
	if used < 50*time.Millisecond {
		t.Fatalf("%v of CPU after spinning for %v", used, wall)
	}
	if used > wall*time.Duration(runtime.NumCPU())+20*time.Millisecond {
		t.Fatalf("%v of CPU in %v of wall time on %d cores", used, wall, runtime.NumCPU())
	}
}

// TestCPUOf reads this process's CPU by its pid as CPU reads it, and
// nothing for a pid that is not there.
func TestCPUOf(t *testing.T) {
	if runtime.GOOS != "linux" {
		return
	}
	before := CPU()
	by := CPUOf(os.Getpid())
	after := CPU()
	if by < before || by > after {
		t.Fatalf("CPUOf(self) = %v, outside CPU's %v to %v", by, before, after)
	}
	if c := CPUOf(1 << 30); c != 0 {
		t.Fatalf("CPUOf(a pid that is not there) = %v; want 0", c)
	}
}

// TestResidentOf reads this process's resident set by its pid, and
// nothing for a pid that is not there.
func TestResidentOf(t *testing.T) {
	if runtime.GOOS != "linux" {
		return
	}
	if anon, file := ResidentOf(os.Getpid()); anon <= 0 || file <= 0 {
		t.Fatalf("ResidentOf(self) = %d anonymous, %d file-backed; want both", anon, file)
	}
	if anon, file := ResidentOf(1 << 30); anon != 0 || file != 0 {
		t.Fatalf("ResidentOf(a pid that is not there) = %d, %d; want 0", anon, file)
	}
}
