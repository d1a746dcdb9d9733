// Package logbuf is a log sink that tests read while the code under test
// writes to it from other goroutines (a server's handlers, a process's
// output copier).
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one writer and readers at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
