package telegram

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/changes"
)

// memKV is an in-memory core.Values for the poller's unit tests only; the program
// uses the store's.
type memKV struct {
	mu       sync.Mutex
	vals     map[string]string
	owners   map[string]string
	until    map[string]time.Time
	sets     int
	denied   map[string]int // lease refusals by owner
	failSets int            // SetValue fails this many more times
	// changes is notified on every write, so tests wait for a state
	// instead of polling for it.
	changes changes.Signal
}

func newMemKV() *memKV {
	return &memKV{vals: map[string]string{}, owners: map[string]string{}, until: map[string]time.Time{}, denied: map[string]int{}}
}

// touch wakes waitFor.
func (m *memKV) touch() { m.changes.Notify() }

// waitFor waits up to five seconds for cond, re-checking after each write.
func (m *memKV) waitFor(cond func() bool) bool { return m.changes.Wait(5*time.Second, 0, cond) }

func (m *memKV) Value(_ context.Context, k string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.vals[k], nil
}

func (m *memKV) SetValue(_ context.Context, k, v string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failSets > 0 {
		m.failSets--
		m.touch()
		return errors.New("memKV: the write failed")
	}
	m.vals[k] = v
	m.sets++
	m.touch()
	return nil
}

func (m *memKV) Lease(_ context.Context, k, owner string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o := m.owners[k]; o != "" && o != owner && time.Now().Before(m.until[k]) {
		m.denied[owner]++
		m.touch()
		return false, nil
	}
	m.owners[k], m.until[k] = owner, time.Now().Add(ttl)
	m.touch()
	return true, nil
}

func (m *memKV) Release(_ context.Context, k, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owners[k] == owner {
		delete(m.owners, k)
	}
	return nil
}

func (m *memKV) refusals(owner string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.denied[owner]
}

func (m *memKV) value(k string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.vals[k]
}

func countCalls(f *telegramfake.Server, method string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

// startRun runs the adapter (and the outbox) and returns a stop function
// that waits for Run to return.
func (e *env) startRun() func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { e.a.Run(ctx); done <- struct{}{} }()
	go func() {
		loops.Deliver(ctx, e.svc, e.a, loops.DeliverOptions{Block: 50 * time.Millisecond, MinIdle: time.Second})
		done <- struct{}{}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
			<-done
		}
	}
	e.t.Cleanup(stop)
	return stop
}

func TestPollingHandlesClicksAndKeepsTheOffset(t *testing.T) {
	kv := newMemKV()
	e := newEnv(t, kv)
	stop := e.startRun()
	q := e.ask(decisionInput())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if note := e.click(userAlice, c, findButton(t, c, "PostgreSQL")); note != "Recorded: PostgreSQL" {
		t.Fatalf("told %q", note)
	}
	e.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	// The offset is stored right after the update is handled.
	if !kv.waitFor(func() bool { n, _ := strconv.Atoi(kv.value(e.a.offsetKey())); return n > 0 }) {
		t.Fatalf("offset not stored: %q", kv.value(e.a.offsetKey()))
	}
	if countCalls(e.fake, "deleteWebhook") != 1 {
		t.Fatal("the poller did not clear a leftover webhook")
	}
	stop()
	// Restart on the same KV: the handled click is not replayed, and a
	// new one is received.
	answers := countCalls(e.fake, "answerCallbackQuery")
	a2, err := New(e.svc, e.a.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.a = a2
	e.startRun()
	q2 := e.ask(decisionInput())
	c2 := e.card(q2.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if note := e.click(userBob, c2, findButton(t, c2, "SQLite")); note != "Recorded: SQLite" {
		t.Fatalf("after restart told %q", note)
	}
	if got := countCalls(e.fake, "answerCallbackQuery"); got != answers+1 {
		t.Fatalf("%d callback answers after the restart, want exactly the new one", got-answers)
	}
	if got := len(e.events(q.ID, core.EventRefused)); got != 0 {
		t.Fatalf("the old click was replayed: %d refusals", got)
	}
}

// TestPollingHandlesAnUpdateOnce: an update handled but whose offset
// could not be stored (the store failed, or the lease moved first) is
// fetched again, and is recognised (FirstSeen), as a webhook's repeat is:
// the click is answered once and reaches core once. Before, polling
// handled it again, and the person was told their answer was not
// recorded.
func TestPollingHandlesAnUpdateOnce(t *testing.T) {
	kv := newMemKV()
	kv.failSets = 1
	e := newEnv(t, kv)
	e.startRun()
	q := e.ask(decisionInput())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if note := e.click(userAlice, c, findButton(t, c, "PostgreSQL")); note != "Recorded: PostgreSQL" {
		t.Fatalf("told %q", note)
	}
	if !kv.waitFor(func() bool { n, _ := strconv.Atoi(kv.value(e.a.offsetKey())); return n > 0 }) {
		t.Fatalf("offset not stored after the failed write: %q", kv.value(e.a.offsetKey()))
	}
	if n := countCalls(e.fake, "answerCallbackQuery"); n != 1 {
		t.Fatalf("the click was answered %d times; want once", n)
	}
	if got := len(e.events(q.ID, core.EventRefused)); got != 0 {
		t.Fatalf("the click reached core again: %d refusals", got)
	}
}

func TestPollingBacksOffOnConflict(t *testing.T) {
	kv := newMemKV()
	e := newEnv(t, kv)
	var mu sync.Mutex
	var slept []time.Duration
	e.a.sleep = func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		return ctx.Err() == nil
	}
	conflict := telegramfake.Failure{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
	for range 4 {
		e.fake.FailNext("getUpdates", conflict)
	}
	e.fake.FailNext("getUpdates", telegramfake.Failure{Code: 429, Description: "Too Many Requests: retry after 9", RetryAfter: 9})
	e.startRun()
	// After the failures, polling resumes: a click goes through.
	q := e.ask(decisionInput())
	c := e.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	if note := e.click(userAlice, c, findButton(t, c, "SQLite")); note != "Recorded: SQLite" {
		t.Fatalf("told %q", note)
	}
	mu.Lock()
	got := append([]time.Duration(nil), slept...)
	mu.Unlock()
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 9 * time.Second}
	if len(got) < len(want) {
		t.Fatalf("backed off %v, want %v", got, want)
	}
	for i, d := range want {
		if got[i] != d {
			t.Fatalf("backed off %v, want %v first", got, want)
		}
	}
}

func TestOnlyTheLeaseHolderPolls(t *testing.T) {
	kv := newMemKV()
	e1 := newEnv(t, kv)
	stop1 := e1.startRun()
	if !e1.fake.Wait(5*time.Second, func() bool { return countCalls(e1.fake, "getUpdates") > 0 }) {
		t.Fatal("the first replica never polled")
	}
	e2 := newEnv(t, kv) // same bot id, its own fake: a second replica
	e2.a.opts.Owner = "replica-2"
	e2.a.opts.LeaseTTL = 300 * time.Millisecond
	e2.startRun()
	// While replica 1 holds the lease, replica 2 is refused it (several
	// times) and never polls.
	if !kv.waitFor(func() bool { return kv.refusals("replica-2") >= 3 }) {
		t.Fatal("replica 2 never asked for the lease")
	}
	if n := countCalls(e2.fake, "getUpdates"); n != 0 {
		t.Fatalf("replica 2 polled %d times without the lease", n)
	}
	stop1() // releases the lease
	if !e2.fake.Wait(5*time.Second, func() bool { return countCalls(e2.fake, "getUpdates") > 0 }) {
		t.Fatal("replica 2 did not take over after replica 1 stopped")
	}
}

// deadKV is a replica's view of the shared store once the replica has
// died: nothing it does reaches the store any more, so its lease is
// neither renewed nor released.
type deadKV struct {
	PollState
	mu   sync.Mutex
	dead bool
}

func (d *deadKV) kill() { d.mu.Lock(); d.dead = true; d.mu.Unlock() }

func (d *deadKV) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return context.DeadlineExceeded
	}
	return nil
}

func (d *deadKV) Lease(ctx context.Context, k, owner string, ttl time.Duration) (bool, error) {
	if err := d.err(); err != nil {
		return false, err
	}
	return d.PollState.Lease(ctx, k, owner, ttl)
}

func (d *deadKV) Release(ctx context.Context, k, owner string) error {
	if err := d.err(); err != nil {
		return err
	}
	return d.PollState.Release(ctx, k, owner)
}

// TestDeadPollerIsReplaced: the lease holder dies without releasing; it
// stops polling once it can no longer renew, and the other replica takes
// the lease when it lapses and handles a click that waited meanwhile.
func TestDeadPollerIsReplaced(t *testing.T) {
	shared := newMemKV()
	dying := &deadKV{PollState: shared}
	e1 := newEnv(t, dying)
	e1.a.opts.LeaseTTL = 400 * time.Millisecond
	e1.startRun()
	if !e1.fake.Wait(5*time.Second, func() bool { return countCalls(e1.fake, "getUpdates") > 0 }) {
		t.Fatal("the first replica never polled")
	}
	e2 := newEnv(t, shared)
	e2.a.opts.Owner, e2.a.opts.LeaseTTL = "replica-2", 400*time.Millisecond
	e2.startRun()
	if !shared.waitFor(func() bool { return shared.refusals("replica-2") >= 2 }) {
		t.Fatal("replica 2 never asked for the lease")
	}
	q := e2.ask(decisionInput())
	c := e2.card(q.ID, func(m telegramfake.Message) bool { return len(m.Buttons()) > 0 })
	dying.kill()
	// The click waits in replica 2's queue until replica 2 polls.
	if note := e2.click(userAlice, c, findButton(t, c, "PostgreSQL")); note != "Recorded: PostgreSQL" {
		t.Fatalf("told %q", note)
	}
	e2.wait(q.ID, func(q *core.Question) bool { return !q.Open() })
	if got := countCalls(e2.fake, "answerCallbackQuery"); got != 1 {
		t.Fatalf("the click was answered %d times", got)
	}
}
