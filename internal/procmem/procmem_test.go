package procmem

import (
	"runtime"
	"testing"
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
