package slack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/changes"
	"github.com/rs/zerolog"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// TestReadLoopAcksNoMoreOnceStopped: envelopes the client buffered before
// it stopped are still taken by the read loop, and their acks, with no
// connection left to send them, are given up at once. Before, each ack
// waited for room among the client's unsent responses, which only a
// live connection drains: the 21st blocked the loop, and the shutdown
// waiting for it, for good.
func TestReadLoopAcksNoMoreOnceStopped(t *testing.T) {
	sm := socketmode.New(slack.New("xoxb-test")) // never run: nothing sends its responses
	const buffered = 30                          // the client keeps 20 responses unsent
	for i := range buffered {
		sm.Events <- socketmode.Event{Type: socketmode.EventTypeSlashCommand, Request: &socketmode.Request{EnvelopeID: fmt.Sprint("env-", i)}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped
	a := &Adapter{log: zerolog.Nop()}
	done := make(chan error)
	returned := make(chan struct{})
	go func() { _, _ = a.socketEvents(ctx, ctx, sm, done); close(returned) }()
	var polled changes.Signal // nothing notifies it: it polls
	if !polled.Wait(5*time.Second, 5*time.Millisecond, func() bool { return len(sm.Events) == 0 }) {
		n := len(sm.Events)
		t.Fatalf("the read loop stopped with %d of %d buffered envelopes untaken: an ack blocked it", n, buffered)
	}
	done <- context.Canceled
	<-returned
}
