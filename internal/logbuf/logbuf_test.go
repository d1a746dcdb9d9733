package logbuf

import (
	"testing"
	"time"
)

// TestWaitFor: a waiter is woken by the write that brings its text, and
// one whose text never comes is told so once its time is up.
func TestWaitFor(t *testing.T) {
	var b Buffer
	go func() {
		_, _ = b.Write([]byte("starting\n"))
		_, _ = b.Write([]byte("admin token kept in /data/admin.token\n"))
	}()
	if !b.WaitFor("/data/admin.token", 10*time.Second) {
		t.Fatalf("the text written was not seen: %q", b.String())
	}
	if b.WaitFor("never written", 20*time.Millisecond) {
		t.Fatal("a text never written was seen")
	}
}
