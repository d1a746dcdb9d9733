package bolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// TestARefusedLeaseCommitsNothing: a lease another owner holds, and the
// release of one not held, write nothing and so commit nothing (no
// fsync). Before, each committed an empty transaction: the first
// reminder pass after a restart, which asks again for the claim of every
// reminder sent before it, paid one fsync per open question.
func TestARefusedLeaseCommitsNothing(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if ok, err := s.Lease(ctx, "remind:q1:1", "first", time.Hour); err != nil || !ok {
		t.Fatalf("first lease: %v, %v", ok, err)
	}
	before := s.commits.committed.Load()
	if ok, err := s.Lease(ctx, "remind:q1:1", "second", time.Hour); err != nil || ok {
		t.Fatalf("second owner's lease: %v, %v; want refused", ok, err)
	}
	if err := s.Release(ctx, "remind:q1:1", "second"); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "never-leased", "second"); err != nil {
		t.Fatal(err)
	}
	if n := s.commits.committed.Load() - before; n != 0 {
		t.Fatalf("%d commits for a refused lease and two releases of nothing held, want 0", n)
	}
	// Still the first owner's, and released by it (a real write).
	if ok, err := s.Lease(ctx, "remind:q1:1", "second", time.Hour); err != nil || ok {
		t.Fatalf("second owner's lease after its release of nothing: %v, %v; want refused", ok, err)
	}
	if err := s.Release(ctx, "remind:q1:1", "first"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Lease(ctx, "remind:q1:1", "second", time.Hour); err != nil || !ok {
		t.Fatalf("second owner's lease once released: %v, %v", ok, err)
	}
}

// TestAReminderPassQueuesItsClaimsTogether: with the commit queue held,
// a reminder pass over many due questions queues several of their claims
// at once, so one commit (one fsync) takes them all. Before, the pass
// claimed and stored each reminder alone, two commits per reminder: 2,000
// due after a downtime were 4,000 fsyncs in a row.
func TestAReminderPassQueuesItsClaimsTogether(t *testing.T) {
	const due, together = 16, 4
	s, err := Open(filepath.Join(t.TempDir(), "askbridge.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	clock := core.NewSimClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, err := core.New(s, core.Config{ActorKey: []byte("k"), Routes: map[string]core.Route{
		"nag": {Deciders: map[core.Surface][]string{core.SurfaceAPI: {"*"}}, RemindEvery: time.Hour},
	}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	for range due {
		if _, err := svc.Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a", RunID: "r", Text: "Which?",
			Reversibility: core.Reversible, Route: "nag", Timeout: 24 * time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Hour + time.Minute)

	release := holdCommits(t, s)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := svc.Remind(context.WithoutCancel(ctx))
		done <- result{n, err}
	}()
	queued := func() int {
		s.commits.mu.Lock()
		defer s.commits.mu.Unlock()
		return len(s.commits.pending)
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for n := queued(); n < together; n = queued() {
		if time.Now().After(deadline) {
			_ = release()
			t.Fatalf("%d claims queued for one commit, want at least %d", n, together)
		}
		<-tick.C
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.n != due {
		t.Fatalf("Remind = %d, %v; want all %d reminded", r.n, r.err, due)
	}
}

// TestARefusedOnceCommitsNothing: a Once that is not the first writes
// nothing, so it costs no commit and no fsync (reminders, digests and
// other once-only sends ask it of every replica).
func TestARefusedOnceCommitsNothing(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if first, err := s.Once(ctx, "digest:k", time.Hour); err != nil || !first {
		t.Fatalf("first once: %v, %v", first, err)
	}
	before := s.commits.committed.Load()
	if first, err := s.Once(ctx, "digest:k", time.Hour); err != nil || first {
		t.Fatalf("second once: %v, %v; want not the first", first, err)
	}
	if n := s.commits.committed.Load() - before; n != 0 {
		t.Fatalf("%d commits for a Once that was not the first, want 0", n)
	}
}
