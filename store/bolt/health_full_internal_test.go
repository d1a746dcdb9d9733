//go:build linux || darwin

package bolt

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// The store's health on a full disk, made with RLIMIT_FSIZE
// (fileCannotGrow), which is why this file is built only where that cap
// has been tried; the other test of its health (health_internal_test.go)
// needs none and runs everywhere.

// fileCannotGrow makes the store file at path unable to grow, as on a
// full disk, by capping the size of any file this process writes at the
// file's size (RLIMIT_FSIZE: growing past it fails with EFBIG, and Go
// ignores the SIGXFSZ that comes with it). The cap is the whole
// process's, so it is lifted by the function returned, at once after the
// writes that are to fail: the package's tests do not run in parallel,
// and meanwhile the test binary writes no file of its own (go test's
// test log grows as files are opened or looked at and the environment
// read, which those writes do not do).
func fileCannotGrow(t *testing.T, path string) (lift func()) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
		t.Fatal(err)
	}
	capped := was
	capped.Cur = uint64(fi.Size())
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &capped); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	lift = func() {
		once.Do(func() {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &was); err != nil {
				t.Fatalf("lift the file size cap: %v", err)
			}
		})
	}
	t.Cleanup(lift)
	return lift
}

// A disk that fills up: every write whose commit cannot grow the file is
// told so and stores nothing, and Ping (the readiness probe) says the
// writes fail, where it said ready because a read still worked. It says
// so for a while after the last failure even if a small write then finds
// room, and the store writes again once the disk has room.
func TestPingSaysWhenCommitsFail(t *testing.T) {
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "askbridge.db")
	s, err := Open(path, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if msg := pingMessage(t, s); msg != "" {
		t.Fatalf("ping before any failure: %q", msg)
	}

	big := strings.Repeat("x", 200<<10) // needs the file to grow
	const n = 8
	errs := make([]error, n)
	lift := fileCannotGrow(t, path)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.SetValue(ctx, fmt.Sprint("big-", i), big) })
	}
	wg.Wait()
	lift()
	for i, err := range errs {
		if err == nil {
			t.Fatalf("write %d was acknowledged though the file could not grow", i)
		}
		if v, err := s.Value(ctx, fmt.Sprint("big-", i)); err != nil || v != "" {
			t.Fatalf("failed write %d left %d bytes, %v", i, len(v), err)
		}
	}
	if msg := pingMessage(t, s); !strings.Contains(msg, "writes to the store file are failing") {
		t.Fatalf("ping while commits fail: %q", msg)
	}

	// A small write succeeds; the failure is still reported for a while.
	if err := s.SetValue(ctx, "small", "v"); err != nil {
		t.Fatal(err)
	}
	if msg := pingMessage(t, s); msg == "" {
		t.Fatal("ping forgot the failure at the next small write")
	}
	clock.Advance(failingFor)
	if msg := pingMessage(t, s); msg != "" {
		t.Fatalf("ping %s after the last failure, a commit having succeeded since: %q", failingFor, msg)
	}
	// A failure that leaves the file as it was does not stop writes.
	if err := s.SetValue(ctx, "big-0", big); err != nil {
		t.Fatalf("write once the disk has room: %v", err)
	}
}
