package teams_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askbridge/askbridge/adapters/teams"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// TestRepeatedClickIsToldTheTruth: Teams sends an invoke again when its
// answer was slow, and the clicker sees only the answer to the copy.
// That copy is told what the first copy was told (a refusal too); while
// the first is still at work, it is answered 503, for the connector to
// send it again (TestCopyOfAnActivityInHandIsSentAgain); never told that
// it counted. Before, every copy was told "Already received; the card
// shows what it did": a refused clicker looked for an answer the card
// never showed, and one whose click was still being recorded was told
// it counted.
func TestRepeatedClickIsToldTheTruth(t *testing.T) {
	kv := &readHook{}
	e := newEnvWith(t, func(v core.Values) core.Values { kv.Values = v; return kv }, nil)
	deploy := func() core.AskInput {
		return core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "deploy", Arguments: []byte(`{}`)}
	}

	// A refusal, and its copy.
	m := e.card(e.ask(deploy()).ID, nil)
	click := e.fake.ExecuteActivity(mallory, m, teams.Verb, action(t, m, card.LabelApprove))
	first, err := teamsfake.InvokeNote(e.deliver(click))
	if err != nil || !strings.Contains(first, "not one of the people") {
		t.Fatalf("mallory's click: %q %v", first, err)
	}
	if again, err := teamsfake.InvokeNote(e.deliver(click)); err != nil || again != first {
		t.Fatalf("the copy of a refused click was told %q, want %q (%v)", again, first, err)
	}

	// A copy that comes while the first is still being handled: the
	// first waits in its read of the card's tie (a card not recorded yet).
	q := e.ask(deploy())
	e.card(q.ID, nil)
	m = e.posted(q.ID, channel)
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
	click = e.fake.ExecuteActivity(alice, m, teams.Verb, action(t, m, card.LabelApprove))
	type answer struct {
		note string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		_, body, err := e.fake.Deliver(click, "")
		if err != nil {
			done <- answer{err: err}
			return
		}
		note, err := teamsfake.InvokeNote(body)
		done <- answer{note, err}
	}()
	<-entered
	status, body, err := e.fake.Deliver(click, "")
	close(release)
	if err != nil || status != http.StatusServiceUnavailable {
		t.Fatalf("a copy while the first is at work: %d %v %s; want 503", status, err, body)
	}
	got := <-done
	if got.err != nil || got.note != "Recorded: Approved" {
		t.Fatalf("the first copy: %q %v", got.note, got.err)
	}
	if again, err := teamsfake.InvokeNote(e.deliver(click)); err != nil || again != got.note {
		t.Fatalf("a copy after the first was answered was told %q, want %q (%v)", again, got.note, err)
	}
	if s := e.get(q.ID); s.State != core.StateAnswered || len(s.Answers) > 1 {
		t.Fatalf("one click sent three times: %s, %d answers", s.State, len(s.Answers))
	}

	// What the first copy was told cannot be read: the copy is told it
	// may or may not have counted.
	m = e.card(e.ask(deploy()).ID, nil)
	click = e.fake.ExecuteActivity(bob, m, teams.Verb, action(t, m, card.LabelDeny))
	if note, err := teamsfake.InvokeNote(e.deliver(click)); err != nil || !strings.HasPrefix(note, "Recorded") {
		t.Fatalf("bob's click: %q %v", note, err)
	}
	gone := func() error { return core.Internal("value", errors.New("unreadable: the store is gone")) }
	kv.hook.Store(&gone)
	if again, err := teamsfake.InvokeNote(e.deliver(click)); err != nil || again != card.TimedOutNote {
		t.Fatalf("a copy whose first note is unreadable was told %q (%v)", again, err)
	}
}
