package changes

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitWakesOnNotify(t *testing.T) {
	var s Signal
	var v atomic.Int32
	done := make(chan bool)
	go func() { done <- s.Wait(10*time.Second, 0, func() bool { return v.Load() == 3 }) }()
	for i := 0; i < 3; i++ {
		v.Add(1)
		s.Notify()
	}
	if !<-done {
		t.Fatal("Wait missed the change")
	}
	if s.Wait(time.Millisecond, 0, func() bool { return v.Load() == 4 }) {
		t.Fatal("Wait reported a condition that never held")
	}
}
