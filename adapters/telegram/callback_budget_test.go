package telegram

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/internal/coretest"
)

// heldStore is a store one of whose calls a test holds, as a Redis
// failover or a WAIT on a lagging replica would: once armed, the first
// call that matches waits, after closing entered, until release is
// closed.
type heldStore struct {
	core.Store
	mu      sync.Mutex
	match   func(op, key string) bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHeldStore(st core.Store) *heldStore {
	return &heldStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
}

func (s *heldStore) arm(match func(op, key string) bool) {
	s.mu.Lock()
	s.match = match
	s.mu.Unlock()
}

// free lets the held call go on.
func (s *heldStore) free() { s.once.Do(func() { close(s.release) }) }

func (s *heldStore) hold(ctx context.Context, op, key string) error {
	s.mu.Lock()
	held := s.match != nil && s.match(op, key)
	if held {
		s.match = nil
	}
	s.mu.Unlock()
	if !held {
		return nil
	}
	close(s.entered)
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *heldStore) Get(ctx context.Context, id core.QuestionID) (*core.Question, error) {
	if err := s.hold(ctx, "get", string(id)); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, id)
}

func (s *heldStore) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := s.hold(ctx, "once", key); err != nil {
		return false, err
	}
	return s.Store.Once(ctx, key, ttl)
}

// tapHeld taps card m's "PostgreSQL" as alice and waits until the tap's
// work is held in st (armed), returning the callback query's id.
func tapHeld(t *testing.T, e *env, st *heldStore, m telegramfake.Message) string {
	t.Helper()
	u, qid, err := e.fake.CallbackUpdate(userAlice, m.ChatID, m.ID, findButton(t, m, "PostgreSQL").Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Deliver(u); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the tap never reached the store")
	}
	return qid
}

// TestTapAnsweredWithinBudget: a tap's callback query is answered within
// answerBudget whatever the store does. Telegram shows the tapper a
// spinner until the query is answered and expires it after some seconds,
// so a tap whose store work (its dedupe, the question's read) outlasts
// the budget is answered with the note that it may or may not be recorded
// (not that it could not be: the work goes on and records the answer
// once the store is back). In polling mode, updates
// are taken one at a time: the next tap is not held behind the slow one.
func TestTapAnsweredWithinBudget(t *testing.T) {
	for name, stall := range map[string]func(q core.QuestionID) func(op, key string) bool{
		"question read": func(q core.QuestionID) func(op, key string) bool {
			return func(op, key string) bool { return op == "get" && key == string(q) }
		},
		"dedupe": func(core.QuestionID) func(op, key string) bool {
			return func(op, key string) bool { return op == "once" && strings.Contains(key, ":update:") }
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := newHeldStore(coretest.OpenStore(t))
			e := newEnvOn(t, newMemKV(), st)
			budget := make(chan time.Time, 1)
			e.a.tapBudget = func() <-chan time.Time { return budget }
			e.run()
			t.Cleanup(st.free) // before run's cleanup, which waits for the tap
			any := func(telegramfake.Message) bool { return true }
			slow, fast := e.ask(decisionInput()), e.ask(decisionInput())
			ms, mf := e.card(slow.ID, any), e.card(fast.ID, any)

			st.arm(stall(slow.ID))
			qid := tapHeld(t, e, st, ms)
			budget <- time.Now() // the budget runs out while the store is held
			note, err := e.fake.CallbackAnswer(qid, 10*time.Second)
			if err != nil {
				t.Fatalf("the callback query waits on the store: %v", err)
			}
			if note != card.TimedOutNote {
				t.Errorf("answered %q, want %q", note, card.TimedOutNote)
			}

			// The next update is taken while the slow tap's work waits.
			note, err = e.fake.Click(userAlice, mf.ChatID, mf.ID, findButton(t, mf, "SQLite").Data, 10*time.Second)
			if err != nil {
				t.Fatalf("the next tap is held behind the slow one: %v", err)
			}
			if !strings.HasPrefix(note, "Recorded") {
				t.Errorf("the next tap was answered %q", note)
			}
			e.wait(fast.ID, func(q *core.Question) bool { return !q.Open() })

			// Once the store is back, the slow tap's work records it.
			st.free()
			q := e.wait(slow.ID, func(q *core.Question) bool { return !q.Open() })
			if q.State != core.StateAnswered || q.Resolution == nil || q.Resolution.OptionID != "pg" {
				t.Errorf("the slow tap's answer: %+v", q.Resolution)
			}
		})
	}
}

// TestRunWaitsForASlowTap: a tap answered past its budget has its store
// work still under way, and Run returns only once it is done, so the
// program closes no store under it: the answer that work records is in
// the store by the time Run has returned.
func TestRunWaitsForASlowTap(t *testing.T) {
	st := newHeldStore(coretest.OpenStore(t))
	e := newEnvOn(t, newMemKV(), st)
	budget := make(chan time.Time, 1)
	e.a.tapBudget = func() <-chan time.Time { return budget }
	stop := e.startRun()
	t.Cleanup(st.free) // before startRun's stop, which waits for the tap
	q := e.ask(decisionInput())
	m := e.card(q.ID, func(telegramfake.Message) bool { return true })

	st.arm(func(op, key string) bool { return op == "get" && key == string(q.ID) })
	qid := tapHeld(t, e, st, m)
	budget <- time.Now()
	if _, err := e.fake.CallbackAnswer(qid, 10*time.Second); err != nil {
		t.Fatalf("the callback query waits on the store: %v", err)
	}

	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	// Once Run is ending (it takes no more taps), the store comes back.
	if !e.fake.Wait(10*time.Second, e.a.prompts.work.Stopped) {
		t.Fatal("Run never began to end")
	}
	st.free()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("Run never returned once the store was back")
	}
	got, err := st.Store.Get(t.Context(), q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Open() {
		t.Error("Run returned while the slow tap's work had yet to record its answer")
	}
}
