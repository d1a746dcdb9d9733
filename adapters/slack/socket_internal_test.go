package slack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestStopEndsASubmissionsWaitForRoom: a modal submitted while every
// pending slot is taken (maxPending handled or waiting) holds the read
// loop in spawn; a stop ends that wait, the submission answered without
// being taken, and the loop returns. Before, the wait ended only with
// the connection, which a stopping adapter keeps up until the loop
// returns: the stop waited for a handler to finish (up to handleBudget).
func TestStopEndsASubmissionsWaitForRoom(t *testing.T) {
	const wait = 10 * time.Second
	a := &Adapter{log: zerolog.Nop(), opts: Options{AckBudget: wait},
		sema: make(chan struct{}, maxHandlers), pending: make(chan struct{}, maxPending)}
	for range maxPending {
		a.pending <- struct{}{}
	}
	sm := socketmode.New(slack.New("xoxb-test")) // never run: its response buffer takes the one ack
	sm.Events = make(chan socketmode.Event)      // each envelope handed over as the loop takes it
	conn, lost := context.WithCancel(context.Background())
	defer lost() // lets a loop that never returned go
	life, stop := context.WithCancel(context.Background())
	defer stop()
	owed := &owedAcks{}
	returned := make(chan struct{})
	go func() {
		_, _ = a.socketEvents(life, conn, sm, make(chan error), owed)
		close(returned)
	}()
	sub := socketmode.Event{Type: socketmode.EventTypeInteractive, Request: &socketmode.Request{EnvelopeID: "env-sub"},
		Data: slack.InteractionCallback{Type: slack.InteractionTypeViewSubmission}}
	select {
	case sm.Events <- sub: // taken: the loop goes on to wait for a slot
	case <-time.After(wait):
		t.Fatal("the read loop did not take the submission")
	}
	stop()
	select {
	case <-returned:
	case <-time.After(wait):
		t.Fatal("the read loop did not return once stopped: it still waits for a slot for the submission")
	}
	if n, _ := owed.owing(); n != 0 {
		t.Errorf("%d acks still owed once the loop returned; want the submission's sent", n)
	}
	if n := len(a.pending); n != maxPending {
		t.Errorf("%d pending slots taken after the stop, want %d: the stopped adapter took the submission", n, maxPending)
	}
}

// TestReadLoopAckEndsWithTheClient: an ack the read loop sends once the
// client has twenty responses unsent (a lost connection leaves them so)
// ends when the client gives up, and the loop returns with its error.
// Before, the ack waited on the connection's context, which ended only
// once the loop returned: with nothing left to send responses, the loop
// waited for good, the adapter neither opening a new connection nor
// stopping.
func TestReadLoopAckEndsWithTheClient(t *testing.T) {
	const wait = 10 * time.Second
	asked, refuse := make(chan struct{}, 1), make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-refuse:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte(`{"ok":false,"error":"invalid_auth"}`))
	}))
	defer api.Close()
	defer close(refuse)
	sm := socketmode.New(slack.New("xoxb-test", slack.OptionAPIURL(api.URL+"/"), slack.OptionAppLevelToken("xapp-test")))
	sm.Events = make(chan socketmode.Event) // each event handed over as the loop takes it
	for i := range 20 {                     // the client keeps 20 responses unsent
		if err := sm.AckCtx(t.Context(), fmt.Sprint("env-", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	life := t.Context()
	conn, cancel, done := runClient(life, sm)
	defer cancel() // lets a loop that never returned go
	a := &Adapter{log: zerolog.Nop()}
	returned := make(chan error, 1)
	go func() {
		_, err := a.socketEvents(life, conn, sm, done, &owedAcks{})
		returned <- err
	}()
	// The loop has taken the client's news that it connects once the
	// client asks Slack, which holds its answer: the loop takes the next
	// envelope meanwhile, and its ack finds no room.
	select {
	case <-asked:
	case <-time.After(wait):
		t.Fatal("the client did not try to connect")
	}
	select {
	case sm.Events <- socketmode.Event{Type: socketmode.EventTypeSlashCommand, Request: &socketmode.Request{EnvelopeID: "env-late"}}:
	case <-time.After(wait):
		t.Fatal("the read loop did not take the envelope")
	}
	refuse <- struct{}{} // Slack refuses the app token: the client gives up
	select {
	case err := <-returned:
		if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Errorf("the read loop returned %v, want the client's invalid_auth", err)
		}
	case <-time.After(wait):
		t.Fatal("the read loop did not return once the client gave up: its ack waits for good")
	}
}

// TestStopEndsTheReadLoopsAckWait: an ack the read loop sends itself
// (here a slash command's) while the client has twenty responses unsent
// and is still connecting again (a lost connection's, nothing sending
// them) ends once the adapter stops, and the loop returns, the envelope
// left unacknowledged for Slack to send again. Before, the ack waited on
// the connection, which a stopping adapter keeps up until the loop
// returns: the stop waited until Slack could be reached again.
func TestStopEndsTheReadLoopsAckWait(t *testing.T) {
	const wait = 10 * time.Second
	sm := socketmode.New(slack.New("xoxb-test")) // never run: nothing sends its responses
	sm.Events = make(chan socketmode.Event)      // each envelope handed over as the loop takes it
	for i := range 20 {                          // the client keeps 20 responses unsent
		if err := sm.AckCtx(t.Context(), fmt.Sprint("env-", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	conn, lost := context.WithCancel(context.Background()) // up: the client connects again
	defer lost()                                           // lets a loop that never returned go
	life, stop := context.WithCancel(context.Background())
	defer stop()
	a := &Adapter{log: zerolog.Nop()}
	returned := make(chan struct{})
	go func() {
		_, _ = a.socketEvents(life, conn, sm, make(chan error), &owedAcks{})
		close(returned)
	}()
	select {
	case sm.Events <- socketmode.Event{Type: socketmode.EventTypeSlashCommand, Request: &socketmode.Request{EnvelopeID: "env-late"}}:
	case <-time.After(wait):
		t.Fatal("the read loop did not take the envelope")
	}
	stop()
	select {
	case <-returned:
	case <-time.After(wait):
		t.Fatal("the read loop did not return once stopped: its ack still waits for room among the client's responses")
	}
}
