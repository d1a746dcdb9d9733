package loops_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/changes"
	"github.com/askbridge/askbridge/internal/coretest"
)

var errStoreDown = errors.New("lease store unreachable")

// flakyLeases is the store's leases with an outage switch: while down,
// every call fails, as one to an unreachable Redis does.
type flakyLeases struct {
	loops.Leases
	mu      sync.Mutex
	down    bool
	failed  int // lease calls that failed
	granted int // lease calls that took or renewed the lease
	changes changes.Signal
}

func (f *flakyLeases) set(down bool) { f.mu.Lock(); f.down = down; f.mu.Unlock() }

func (f *flakyLeases) Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	ok, err := false, errStoreDown
	if !down {
		ok, err = f.Leases.Lease(ctx, key, owner, ttl)
	}
	f.mu.Lock()
	if err != nil {
		f.failed++
	} else if ok {
		f.granted++
	}
	f.mu.Unlock()
	f.changes.Notify()
	return ok, err
}

// counts is how many lease calls have failed and how many took the lease.
func (f *flakyLeases) counts() (failed, granted int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed, f.granted
}

// waitFor waits up to ten seconds for cond over counts, re-checking after
// each lease call.
func (f *flakyLeases) waitFor(t *testing.T, what string, cond func(failed, granted int) bool) {
	t.Helper()
	if !f.changes.Wait(10*time.Second, 0, func() bool { return cond(f.counts()) }) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// leadReports records what a Leader's OnError and OnRecover heard.
type leadReports struct {
	mu     sync.Mutex
	events []string
	first  error // what the first OnError heard
}

func (r *leadReports) onError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		r.first = err
	}
	r.events = append(r.events, "down")
}

func (r *leadReports) onRecover(failed int, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("back after %d", failed))
}

// heard is what has been reported so far, and the first error.
func (r *leadReports) heard() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events), r.first
}

func (r *leadReports) expect(t *testing.T, when string, want ...string) {
	t.Helper()
	if got, _ := r.heard(); !slices.Equal(got, want) {
		t.Fatalf("%s: reported %q, want %q", when, got, want)
	}
}

// TestLeadReportsAStoreOutageOnce: a leader whose lease store fails says
// so at the first failure and not at each of the retries after it, and
// says once that the store answers again, whether the outage comes
// before it leads or while it does. Before, Lead swallowed the errors:
// no replica polled Telegram or held the Discord gateway, and no log line
// said why.
func TestLeadReportsAStoreOutageOnce(t *testing.T) {
	st := &flakyLeases{Leases: coretest.OpenStore(t), down: true}
	rep := &leadReports{}
	running := make(chan bool, 4) // the work starting (true) and ending
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loops.Leader{Leases: st, Key: "loops-test:outage", Owner: "a", TTL: 200 * time.Millisecond,
			OnError: rep.onError, OnRecover: rep.onRecover}.Run(ctx, func(ctx context.Context) {
			running <- true
			<-ctx.Done()
			running <- false
		})
	}()
	defer func() { stop(); <-done }()

	st.waitFor(t, "three failed tries", func(failed, _ int) bool { return failed >= 3 })
	rep.expect(t, "the store failing from the start", "down")
	if _, first := rep.heard(); !errors.Is(first, errStoreDown) {
		t.Fatalf("OnError heard %v, want the store's error", first)
	}
	st.set(false)
	if !within(t, running, "the work never ran once the store answered") {
		t.Fatal("the work ended before it started")
	}
	failed, granted := st.counts()
	st.waitFor(t, "three renewals", func(_, g int) bool { return g >= granted+3 })
	rep.expect(t, "the store answering again", "down", fmt.Sprintf("back after %d", failed))

	st.set(true)
	if within(t, running, "the work went on with the lease's renewals failing") {
		t.Fatal("the work started twice")
	}
	st.waitFor(t, "three more failed calls", func(f, _ int) bool { return f >= failed+3 })
	rep.expect(t, "the store failing while leading", "down", fmt.Sprintf("back after %d", failed), "down")
	st.set(false)
	within(t, running, "the work never ran again once the store answered")
	if got, _ := rep.heard(); len(got) != 4 || !strings.HasPrefix(got[3], "back after ") {
		t.Fatalf("the store answering again the second time: reported %q, want one more recovery", got)
	}
}

// TestLeadReportsAStoreThatStopsAnswering: a store that hangs rather than
// fails is reported once the lease lapses unconfirmed, as the leader then
// stops its work and may wait on the store for as long as it hangs.
func TestLeadReportsAStoreThatStopsAnswering(t *testing.T) {
	st := &stalledLeases{stalled: make(chan struct{})}
	errs := make(chan error, 1)
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loops.Leader{Leases: st, Key: "loops-test:silent", Owner: "a", TTL: 200 * time.Millisecond,
			OnError: func(err error) { errs <- err }}.Run(ctx, func(ctx context.Context) { <-ctx.Done() })
	}()
	defer func() { stop(); close(st.stalled); <-done }()
	if err := within(t, errs, "a store that stopped answering was never reported"); !strings.Contains(err.Error(), "no renewal of lease loops-test:silent confirmed within 200ms") {
		t.Fatalf("reported %v", err)
	}
}
