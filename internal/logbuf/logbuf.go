// Package logbuf is a log sink that tests read while the code under test
// writes to it from other goroutines (a server's handlers, a process's
// output copier).
package logbuf

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// Buffer is a bytes.Buffer safe for one writer and readers at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// grew is closed by the next write, for readers waiting on one.
	grew chan struct{}
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grew != nil {
		close(b.grew)
		b.grew = nil
	}
	return b.b.Write(p)
}

// WaitFor waits, for at most d, until s has been written, woken by each
// write rather than polling, and reports whether it has.
func (b *Buffer) WaitFor(s string, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if strings.Contains(b.b.String(), s) {
			b.mu.Unlock()
			return true
		}
		if b.grew == nil {
			b.grew = make(chan struct{})
		}
		grew := b.grew
		b.mu.Unlock()
		select {
		case <-grew:
		case <-deadline.C:
			return strings.Contains(b.String(), s)
		}
	}
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Lines returns the lines written so far that contain s.
func (b *Buffer) Lines(s string) []string {
	var got []string
	for l := range strings.SplitSeq(b.String(), "\n") {
		if strings.Contains(l, s) {
			got = append(got, l)
		}
	}
	return got
}
