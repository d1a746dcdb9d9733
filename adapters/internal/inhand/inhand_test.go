package inhand_test

import (
	"testing"

	"github.com/askbridge/askbridge/adapters/internal/inhand"
)

// TestCloseWaitsForWorkInHandAndTakesNoMore: Close returns only once the
// work counted before it is done, and no work is counted once it began.
func TestCloseWaitsForWorkInHandAndTakesNoMore(t *testing.T) {
	var g inhand.Group
	if !g.Add() {
		t.Fatal("a fresh group refused work")
	}
	release, ran := make(chan struct{}), make(chan struct{})
	if !g.Go(func() { <-release; close(ran) }) {
		t.Fatal("a fresh group refused a goroutine")
	}
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	for !g.Stopped() {
		select {
		case <-closed:
			t.Fatal("Close returned with work in hand")
		default:
		}
	}
	if g.Add() || g.Go(func() { t.Error("a goroutine started after Stop") }) {
		t.Fatal("work was taken after Stop")
	}
	g.Done()
	select {
	case <-closed:
		t.Fatal("Close returned while a goroutine it started ran")
	default:
	}
	close(release)
	<-closed
	select {
	case <-ran:
	default:
		t.Fatal("Close returned before the goroutine ended")
	}
}
