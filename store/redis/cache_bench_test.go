package redis_test

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// BenchmarkAnswerWatched is one click on a question a local wait watches,
// from one caller: the answer reads the question to build its change on
// (ReadToChange), closes it, and the woken wait reads it again. The read
// cache (copies.go) can spare both reads a round trip; BenchmarkGet, one
// plain read, is the yardstick to quote it against.
func BenchmarkAnswerWatched(b *testing.B) {
	ctx := context.Background()
	s := benchStore(b)
	qs := closable(b, s)
	at := t0.Add(time.Minute)
	runtime.GC()
	b.ResetTimer()
	for _, q := range qs {
		b.StopTimer()
		ch, stop := s.Watch(q.ID)
		if _, err := s.Get(ctx, q.ID); err != nil { // the wait's first read
			b.Fatal(err)
		}
		b.StartTimer()
		t := answer(q, "op", at)
		read, err := s.ReadToChange(ctx, q.ID)
		if err != nil {
			b.Fatal(err)
		}
		t.Read = read
		if _, err := s.Resolve(ctx, t); err != nil {
			b.Fatal(err)
		}
		<-ch
		if got, err := s.Get(ctx, q.ID); err != nil || got.Open() {
			b.Fatalf("the woken read: %+v, %v", got, err)
		}
		b.StopTimer()
		stop()
		b.StartTimer()
	}
}
