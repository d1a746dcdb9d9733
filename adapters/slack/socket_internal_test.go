package slack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// TestReadLoopTakesNoMoreOnceStopped: once the adapter stops, its read
// loop returns without taking the envelopes the client buffered, its
// connection still up for the acks in hand (drainAcks): it takes no new
// work then, and acks none of them, so none can block it. Before, the
// loop took them all; earlier still it acked each with no bound, and
// with nothing left to send acks the 21st blocked the loop, and the
// shutdown waiting for it, for good.
func TestReadLoopTakesNoMoreOnceStopped(t *testing.T) {
	sm := socketmode.New(slack.New("xoxb-test")) // never run: nothing sends its responses
	const buffered = 30                          // the client keeps 20 responses unsent
	for i := range buffered {
		sm.Events <- socketmode.Event{Type: socketmode.EventTypeSlashCommand, Request: &socketmode.Request{EnvelopeID: fmt.Sprint("env-", i)}}
	}
	life, stop := context.WithCancel(context.Background())
	stop() // stopped; the connection (Background) is still up
	a := &Adapter{log: zerolog.Nop()}
	returned := make(chan struct{})
	go func() {
		_, _ = a.socketEvents(life, context.Background(), sm, make(chan error), &owedAcks{})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("the read loop did not return once stopped: an ack blocked it")
	}
	if n := len(sm.Events); n != buffered {
		t.Fatalf("the stopped read loop took %d of %d buffered envelopes", buffered-n, buffered)
	}
}
