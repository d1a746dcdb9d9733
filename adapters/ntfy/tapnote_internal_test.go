package ntfy

import (
	"testing"
	"time"
)

// TestATapNoteHoldsItsTopicWhileItIsPublished: while one refused tap's
// notification is being published, its topic is held, so taps at once
// publish one between them; a failed publish gives the hold back to what
// it was, and never takes away a hold another tap has taken since.
func TestATapNoteHoldsItsTopicWhileItIsPublished(t *testing.T) {
	var n tapNotes
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	release, ok := n.take("t", now)
	if !ok {
		t.Fatal("a topic never told is not due")
	}
	if _, ok := n.take("t", now); ok {
		t.Fatal("a second tap at once was let through while the first publishes")
	}
	if _, ok := n.take("u", now); !ok {
		t.Fatal("another topic was held off by t's")
	}
	release()
	if _, ok := n.take("t", now); !ok {
		t.Fatal("a released topic is still held")
	}
	// Told at now (that take is kept); a later one fails after a third
	// took the topic once the gap had passed: its release leaves the
	// third's hold.
	later := now.Add(tapNoteGap)
	releaseLater, ok := n.take("t", later)
	if !ok {
		t.Fatal("not due a gap after the last")
	}
	n.mu.Lock()
	n.last["t"] = later.Add(tapNoteGap) // a third tap's, as if the clock moved while the second published
	n.mu.Unlock()
	releaseLater()
	if _, ok := n.take("t", later.Add(tapNoteGap+time.Second)); ok {
		t.Fatal("a failed publish's release took away another tap's hold")
	}
	// A release puts back the last told time, not none.
	n = tapNotes{}
	if _, ok := n.take("t", now); !ok {
		t.Fatal("not due")
	}
	release, _ = n.take("t", later)
	release()
	if _, ok := n.take("t", now.Add(time.Second)); ok {
		t.Fatal("a release forgot the notification told before it")
	}
}
