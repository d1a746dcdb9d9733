package bolt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/askbridge/askbridge/core"
)

// pingMessage is the message Ping's error gives the readiness probe, or
// "" when Ping succeeds.
func pingMessage(t *testing.T, s *Store) string {
	t.Helper()
	err := s.Ping(context.Background())
	if err == nil {
		return ""
	}
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Message == "" {
		t.Fatalf("ping: %v, want a coded error with a message for the probe", err)
	}
	return ce.Message
}

// When bbolt's commit fails after its meta page is written (the sync of
// that page failed), the transaction is live in the mapping though its
// callers were told it failed, and the disk may not hold it. Writing on
// would acknowledge later changes as durable on top of it, so the store
// stops writing, and Ping says so. The failure is made as bbolt makes
// it: the real commit happens, then its error is returned.
func TestWritesStopWhenACommitFailsAfterTakingEffect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "askbridge.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var failOnce sync.Once
	s.commits.update = func(fn func(*bbolt.Tx) error) error {
		err := s.db.Update(fn)
		failOnce.Do(func() {
			if err == nil {
				err = &os.PathError{Op: "sync", Path: path, Err: syscall.EIO}
			}
		})
		return err
	}
	if err := s.SetValue(ctx, "a", "1"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("the write whose sync failed: %v, want EIO", err)
	}
	if v, _ := s.Value(ctx, "a"); v != "1" {
		t.Fatalf("the failed commit is not live (value %q): the test does not make bbolt's failure", v)
	}

	err = s.SetValue(ctx, "b", "2")
	var stopped *writesStopped
	if !errors.As(err, &stopped) || !strings.Contains(err.Error(), "restart askbridge") {
		t.Fatalf("a write after it: %v, want writes stopped", err)
	}
	if v, _ := s.Value(ctx, "b"); v != "" {
		t.Fatalf("a write after it was stored: %q", v)
	}
	if msg := pingMessage(t, s); !strings.Contains(msg, "writes are stopped") {
		t.Fatalf("ping: %q", msg)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Opened again, the store writes.
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.SetValue(ctx, "b", "2"); err != nil {
		t.Fatal(err)
	}
	if msg := pingMessage(t, s); msg != "" {
		t.Fatalf("ping after reopening: %q", msg)
	}
}

// TestPingSaysWhenACommitHangs: a commit that does not return (a sync
// on a dead NFS server, a failing disk) fails nothing, it holds every
// write behind it, while reads go on: Ping says so once it has run
// hungAfter on the store's clock, and not before, and is well again
// once it returns. Before, Ping only read, and said ready throughout.
func TestPingSaysWhenACommitHangs(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	began, gate := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	defer release() // before Close, which waits for the commit, should the test fail
	s.commits.update = func(fn func(*bbolt.Tx) error) error {
		close(began)
		<-gate
		return s.db.Update(fn)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- s.SetValue(context.Background(), "a", "1") }()
	<-began
	if msg := pingMessage(t, s); msg != "" {
		t.Fatalf("ping as the commit begins: %q", msg)
	}
	mu.Lock()
	now = now.Add(hungAfter + time.Second)
	mu.Unlock()
	if msg := pingMessage(t, s); !strings.Contains(msg, "has not finished in 31s: the disk may be hung") {
		t.Fatalf("ping with a commit running %s: %q", hungAfter+time.Second, msg)
	}
	release()
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if msg := pingMessage(t, s); msg != "" {
		t.Fatalf("ping once the commit returned: %q", msg)
	}
}
