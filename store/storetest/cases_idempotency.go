package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

func init() {
	register("RepeatedAskParksOnce", testRepeatedAsk)
	register("RepeatedAskRaceParksOnce", testRepeatedAskRace)
	register("RepeatedAskWithAnotherBodyIsRefused", testRepeatedAskOtherBody)
	register("IdempotencyKeyScopesAsksWithoutToolCall", testIdempotencyKey)
	register("IdempotencyOutlivesRunAndEndsWithRetention", testIdempotencyLifetime)
}

// repeat asks in again and fails the test unless it was taken as a repeat.
func (e *env) repeat(in core.AskInput) *core.Question {
	e.t.Helper()
	q, repeat, err := e.svc.AskOrRepeat(e.t.Context(), in)
	if err != nil || !repeat {
		e.t.Fatalf("repeat ask: repeat %v, %v", repeat, err)
	}
	return q
}

// snapshot is everything a refused or repeated ask must leave as it was:
// the open questions, the event log and what waits in the outboxes.
func (e *env) snapshot() any {
	e.t.Helper()
	open, _, err := e.store.ListOpen(e.t.Context(), "", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	evs, err := e.store.Events(e.t.Context(), 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return struct {
		Open   []*core.Question
		Events []core.Event
	}{open, evs}
}

func testRepeatedAsk(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := decision("ops")
	q, repeat, err := e.svc.AskOrRepeat(t.Context(), in)
	if err != nil || repeat || q.Idempotency == nil {
		t.Fatalf("first ask: %+v repeat %v, %v", q, repeat, err)
	}
	before := e.snapshot()
	again := e.repeat(in)
	if diff := cmp.Diff(q, again); diff != "" {
		t.Fatalf("the repeat got another question (-first +repeat):\n%s", diff)
	}
	if diff := cmp.Diff(before, e.snapshot()); diff != "" {
		t.Fatalf("the repeat changed the store (-before +after):\n%s", diff)
	}
	// One post per room, not two.
	for _, s := range []core.Surface{core.SurfaceSlack, core.SurfaceTelegram} {
		if ds := e.claimAll(s, "c1"); len(ds) != 1 {
			t.Fatalf("%s: %d deliveries, want 1", s, len(ds))
		}
	}
	// Across a restart, and once the question is closed, a repeat still
	// gets the same question: the agent learns its outcome, nobody is
	// asked twice.
	e.restart()
	if got := e.repeat(in); got.ID != q.ID {
		t.Fatalf("after a restart the repeat got %s, want %s", got.ID, q.ID)
	}
	if _, err := e.svc.Decline(t.Context(), q.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	if got := e.repeat(in); got.ID != q.ID || got.State != core.StateDeclined {
		t.Fatalf("repeat of a declined ask: %s %s", got.ID, got.State)
	}
	// The same tool call id in another run, or by another agent, is a new
	// question.
	other := in
	other.RunID = "run-2"
	if q2 := e.ask(other); q2.ID == q.ID {
		t.Fatal("the same tool call id in another run was taken as a repeat")
	}
	other = in
	other.Agent = "agent-b"
	if q2 := e.ask(other); q2.ID == q.ID {
		t.Fatal("another agent's ask was taken as a repeat")
	}
}

func testRepeatedAskRace(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := clarification("run-1")
	const n = 50
	ids := make([]core.QuestionID, n)
	repeats := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var q *core.Question
			q, repeats[i], errs[i] = e.svc.AskOrRepeat(t.Context(), in)
			if q != nil {
				ids[i] = q.ID
			}
		})
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("ask %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("ask %d parked %s, ask 0 parked %s", i, ids[i], ids[0])
		}
		if !repeats[i] {
			fresh++
		}
	}
	if fresh != 1 {
		t.Fatalf("%d asks were told they parked a new question, want 1", fresh)
	}
	if got := coretest.Kinds(e.events(ids[0])); !cmp.Equal(got, []core.EventKind{core.EventAsked}) {
		t.Fatalf("events %v, want one asked", got)
	}
	open, _, err := e.store.ListOpen(t.Context(), "", 0)
	if err != nil || len(open) != 1 {
		t.Fatalf("open questions: %d, %v; want 1", len(open), err)
	}
}

func testRepeatedAskOtherBody(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := decision("ops")
	q := e.ask(in)
	before := e.snapshot()
	changed := in
	changed.Text = "Which database for the audit log?"
	_, repeat, err := e.svc.AskOrRepeat(t.Context(), changed)
	if core.ErrorCode(err) != core.CodeConflict || repeat || !strings.Contains(core.ErrorMessage(err), string(q.ID)) {
		t.Fatalf("another body under the same tool call id: repeat %v, %v; want a conflict naming %s", repeat, err, q.ID)
	}
	if diff := cmp.Diff(before, e.snapshot()); diff != "" {
		t.Fatalf("the refusal changed the store (-before +after):\n%s", diff)
	}
}

func testIdempotencyKey(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := clarification("run-1")
	in.ToolCallID = ""
	// Without a key or a tool call id nothing says two asks are one.
	if a, b := e.ask(in), e.ask(in); a.ID == b.ID {
		t.Fatal("two asks with neither key nor tool call id were taken as one")
	}
	in.IdempotencyKey = "retry-7f3a"
	q := e.ask(in)
	if got := e.repeat(in); got.ID != q.ID {
		t.Fatalf("repeat with the key got %s, want %s", got.ID, q.ID)
	}
	// The key is the agent's own.
	other := in
	other.Agent = "agent-b"
	if q2 := e.ask(other); q2.ID == q.ID {
		t.Fatal("another agent's key matched")
	}
	changed := in
	changed.Context = "something else"
	if _, err := e.svc.Ask(t.Context(), changed); core.ErrorCode(err) != core.CodeConflict || !strings.Contains(core.ErrorMessage(err), "Idempotency-Key") {
		t.Fatalf("another body under the key: %v, want a conflict naming the Idempotency-Key", err)
	}
	long := in
	long.IdempotencyKey = string(make([]byte, core.MaxIdempotencyKeyLen+1))
	if _, err := e.svc.Ask(t.Context(), long); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("an over-long key: %v, want invalid", err)
	}
}

func testIdempotencyLifetime(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := clarification("run-9")
	q := e.ask(in)
	if _, err := e.svc.EndRun(t.Context(), core.Run{Agent: "agent-a", ID: "run-9"}); err != nil {
		t.Fatal(err)
	}
	// The run has ended, so a new ask is refused; but a repeat of the ask
	// already parked is answered with its question (now expired).
	if got := e.repeat(in); got.ID != q.ID || got.State != core.StateExpired {
		t.Fatalf("repeat after the run ended: %s %s", got.ID, got.State)
	}
	// Retention drops the question and its key together: the key does not
	// outlive what it points at.
	e.clock.Advance(31 * 24 * time.Hour)
	if n, err := e.svc.Purge(t.Context()); err != nil || n != 1 {
		t.Fatalf("purge: %d, %v", n, err)
	}
	q2, repeat, err := e.svc.AskOrRepeat(t.Context(), in)
	if err != nil || repeat || q2.ID == q.ID {
		t.Fatalf("ask after retention: %v repeat %v, %v; want a new question", q2, repeat, err)
	}
}
