package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
)

// looping is the reload loop over a file, in a synctest bubble, fed file
// events by the test instead of fsnotify, with each reading it hands on
// recorded (and put in force, as far as the loop can tell) instead of
// taken.
type looping struct {
	r      *reloader
	file   string
	events chan fsnotify.Event
	errs   chan error
	mu     sync.Mutex
	got    []string // "trigger: bytes" of each reading handed on
}

// nowhere is a watch that watches nothing: the test sends the events.
type nowhere struct{}

func (nowhere) Add(string) error    { return nil }
func (nowhere) Remove(string) error { return nil }
func (nowhere) Close() error        { return nil }

// startLoop writes yaml to a file, puts it in force and runs the loop
// until the test ends. Call it inside the bubble.
func startLoop(t *testing.T, yaml string) *looping {
	t.Helper()
	file := filepath.Join(t.TempDir(), "askbridge.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &looping{file: file, events: make(chan fsnotify.Event), errs: make(chan error)}
	l.r = &reloader{m: &Main{Settings: Settings{ConfigPath: file}, Log: zerolog.Nop()}, digest: configDigest([]byte(yaml)),
		watched: watched{watcher: nowhere{}, events: l.events, errs: l.errs, path: file, dirs: map[string]bool{}}}
	l.r.rewatch()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.r.loop(ctx, nil, func(_ context.Context, trigger string, raw []byte, err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.got = append(l.got, trigger+": "+string(raw))
			if err == nil {
				l.r.digest, l.r.refused = configDigest(raw), ""
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return l
}

// write writes yaml over the file and sends the event the write makes.
func (l *looping) write(t *testing.T, yaml string) {
	t.Helper()
	if err := os.WriteFile(l.file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	l.events <- fsnotify.Event{Name: l.file, Op: fsnotify.Write}
}

// taken is what the loop handed on, once it has nothing left to do now.
func (l *looping) taken() []string {
	synctest.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

const (
	loopV1   = "routes:\n  deploy:\n    deciders:\n      api: [ops-one]\n"
	loopHalf = "routes:\n  deploy:\n"
	loopV2   = "routes:\n  deploy:\n    deciders:\n      api: [ops-two]\n"
)

// TestReloadWaitsForAFileToSettle: a file written in two steps, read
// between them, is not taken as it was then (valid YAML of half the
// file: a route with no deciders); the whole file is, once it reads the
// same a quiet spell later. Before, the half file was applied, and the
// route went without deciders until the rest arrived.
func TestReloadWaitsForAFileToSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := startLoop(t, loopV1)
		l.write(t, loopHalf)
		time.Sleep(reloadDebounce + time.Millisecond) // the writer pauses past the quiet spell: the half is read
		l.write(t, loopV2)
		time.Sleep(10 * reloadDebounce)
		if got, want := l.taken(), []string{"file: " + loopV2}; !slices.Equal(got, want) {
			t.Fatalf("taken: %s", cmp.Diff(want, got))
		}
	})
}

// TestReloadNotPutOffByABusyNeighbour: another file in the directory
// that changes more often than the quiet spell (a log, a lock file) does
// not put off the reading of a change to the configuration. Before, every
// event in the directory started the quiet spell again, so the change
// waited for the neighbour to stop.
func TestReloadNotPutOffByABusyNeighbour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := startLoop(t, loopV1)
		neighbour := filepath.Join(filepath.Dir(l.file), "askbridge.log")
		stop := make(chan struct{})
		busy := make(chan struct{})
		go func() {
			defer close(busy)
			for {
				select {
				case <-stop:
					return
				case <-time.After(reloadDebounce / 4):
					l.events <- fsnotify.Event{Name: neighbour, Op: fsnotify.Write}
				}
			}
		}()
		l.write(t, loopV2)
		time.Sleep(5 * reloadDebounce) // the neighbour writes all the while
		got := l.taken()
		close(stop)
		<-busy
		if want := []string{"file: " + loopV2}; !slices.Equal(got, want) {
			t.Fatalf("taken while the neighbour was busy: %s", cmp.Diff(want, got))
		}
	})
}

// TestReloadReadsAfterLostEvents: when the system's queue of file events
// overflows, the file's own events may be among those lost: it is read
// all the same (events of other files no longer start a reading, so a
// lost one of the file's would otherwise go unseen).
func TestReloadReadsAfterLostEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := startLoop(t, loopV1)
		if err := os.WriteFile(l.file, []byte(loopV2), 0o600); err != nil {
			t.Fatal(err)
		}
		l.errs <- fmt.Errorf("inotify: %w", fsnotify.ErrEventOverflow) // its event is lost
		time.Sleep(10 * reloadDebounce)
		if got, want := l.taken(), []string{"file: " + loopV2}; !slices.Equal(got, want) {
			t.Fatalf("taken after lost events: %s", cmp.Diff(want, got))
		}
	})
}

// TestWatchedNamesFollowLinks: the names watched for a ConfigMap's file
// reached through a link from another directory are the link, the
// ConfigMap's link to its ..data, ..data and the file in the dated
// directory ..data points to, and after the swap the file in the new one.
func TestWatchedNamesFollowLinks(t *testing.T) {
	mnt, etc := realDir(t), realDir(t)
	dated := func(name string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(mnt, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mnt, name, "askbridge.yaml"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, at string) {
		t.Helper()
		if err := os.Symlink(target, at); err != nil {
			t.Fatal(err)
		}
	}
	dated("..2026_1")
	link("..2026_1", filepath.Join(mnt, "..data"))
	link(filepath.Join("..data", "askbridge.yaml"), filepath.Join(mnt, "askbridge.yaml"))
	config := filepath.Join(etc, "askbridge.yaml")
	link(filepath.Join(mnt, "askbridge.yaml"), config)
	names := func(dated string) watchSet {
		return watchSet{
			etc:                       {"askbridge.yaml": true},
			mnt:                       {"askbridge.yaml": true, "..data": true},
			filepath.Join(mnt, dated): {"askbridge.yaml": true},
		}
	}
	if got, want := watchedNames(config), names("..2026_1"); !cmp.Equal(got, want) {
		t.Fatalf("watched: %s", cmp.Diff(want, got))
	}
	dated("..2026_2")
	link("..2026_2", filepath.Join(mnt, "..data_tmp"))
	if err := os.Rename(filepath.Join(mnt, "..data_tmp"), filepath.Join(mnt, "..data")); err != nil {
		t.Fatal(err)
	}
	if got, want := watchedNames(config), names("..2026_2"); !cmp.Equal(got, want) {
		t.Fatalf("watched after the swap: %s", cmp.Diff(want, got))
	}
	// The file's directory gone: its name is watched in the directory
	// above, where it will be made again.
	gone := filepath.Join(etc, "conf", "askbridge.yaml")
	if got, want := watchedNames(gone), (watchSet{etc: {"conf": true}, filepath.Join(etc, "conf"): {"askbridge.yaml": true}}); !cmp.Equal(got, want) {
		t.Fatalf("watched for a file whose directory is gone: %s", cmp.Diff(want, got))
	}
}

// realDir is a new temporary directory by a path with no link on the
// way (the system's temporary directory may be reached through one).
func realDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
