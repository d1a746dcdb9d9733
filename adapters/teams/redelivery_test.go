package teams_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestCopyOfAClickLeftByADeadReplicaIsHandled: the Bot Connector sends
// an activity again when it heard nothing back for fifteen seconds. A
// click whose replica died with it in hand (killed between marking it and
// recording it) is handled when that copy comes, as the dead replica's
// claim on it has lapsed by then, and the clicker is told it counted.
// Before, the click was marked seen before it was handled, and the copy
// was told it may or may not have counted while nothing was recorded.
func TestCopyOfAClickLeftByADeadReplicaIsHandled(t *testing.T) {
	clock := core.NewSimClock(time.Now())
	kv := &readHook{}
	e := newEnvWith(t, func(v core.Values) core.Values { kv.Values = v; return kv }, clock)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)})
	e.card(q.ID, nil)
	// A card Teams shows before its record reaches the question: the
	// click reads the card's tie, and the replica dies in that read.
	m := e.posted(q.ID, channel)
	entered, release := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	hold := func() error {
		if held.CompareAndSwap(false, true) {
			close(entered)
			<-release
		}
		return nil
	}
	kv.hook.Store(&hold)
	click := e.fake.ExecuteActivity(alice, m, teams.Verb, action(t, m, card.LabelApprove))
	first := make(chan struct{})
	go func() { _, _, _ = e.fake.Deliver(click, ""); close(first) }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the click never reached its card's tie")
	}
	t.Cleanup(func() { close(release); <-first })

	clock.Advance(15 * time.Second) // the connector's wait before it sends it again
	note, err := teamsfake.InvokeNote(e.deliver(click))
	if err != nil || note != "Recorded: Approved" {
		t.Fatalf("the copy of the click the dead replica held was told %q (%v)", note, err)
	}
	if got := e.get(q.ID); got.State != core.StateAnswered {
		t.Fatalf("after the copy: %s", got.State)
	}
}
