package redis_test

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// cutter forwards TCP connections to a target. Once armed with a marker,
// it lets the next command that carries the marker reach the target, then
// drops that connection before the reply comes back: the command has run,
// and the client has lost the reply, as when a connection fails at the
// wrong moment. go-redis then sends the command again on a new connection.
type cutter struct {
	addr   string
	mu     sync.Mutex
	marker []byte // armed while set
	cuts   atomic.Int64
	// meanwhile, if set, runs once the marked command has run and before
	// its connection is dropped, so before go-redis sends it again.
	meanwhile func()
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	p := &cutter{}
	p.addr = forwardTCP(t, target, func(c, u net.Conn) {
		cut := new(atomic.Bool)
		go p.up(c, u, cut)
		go p.down(u, c, cut)
	})
	return p
}

// arm makes the next command carrying marker lose its reply.
func (p *cutter) arm(marker string) {
	p.mu.Lock()
	p.marker = []byte(marker)
	p.mu.Unlock()
}

// up copies the client's commands to the target, and marks the
// connection for cutting when one carries the armed marker.
func (p *cutter) up(c, u net.Conn, cut *atomic.Bool) {
	defer c.Close()
	defer u.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.marker != nil && bytes.Contains(buf[:n], p.marker) {
				p.marker = nil
				cut.Store(true)
			}
			p.mu.Unlock()
			if _, werr := u.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// down copies the target's replies back, unless the connection is marked:
// then the reply is dropped and both sides are closed.
func (p *cutter) down(u, c net.Conn, cut *atomic.Bool) {
	defer c.Close()
	defer u.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := u.Read(buf)
		if n > 0 && cut.Load() {
			p.cuts.Add(1)
			if p.meanwhile != nil {
				p.meanwhile()
			}
			return
		}
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replayed is a store whose client reaches Redis through a cutter, and a
// second store on the same keys that does not. Redis has the resolve
// script by then, so the command whose reply is lost is one that ran (an
// EVALSHA of a script Redis lacks runs nothing and is sent again whole).
func replayed(t *testing.T) (*cutter, *redisstore.Store, *redisstore.Store) {
	t.Helper()
	p := newCutter(t, server.Addr())
	prefix := randomPrefix()
	c := goredis.NewClient(&goredis.Options{Addr: p.addr})
	t.Cleanup(func() { _ = c.Close() })
	a, b := newStoreOn(t, c, redisstore.Options{Prefix: prefix}), newStore(t, redisstore.Options{Prefix: prefix})
	warm := question(0, "run-warm", t0)
	mustCreate(t, b, warm)
	if _, err := b.Resolve(t.Context(), answer(warm, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	if err := b.Renotify(t.Context(), core.Renotice{QuestionID: warm.ID, Now: t0}); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("renotifying a closed question: %v", err)
	}
	return p, a, b
}

// resolveLosingTheReply runs tr on s with the first run's reply lost,
// and fails unless the reply was in fact lost once.
func resolveLosingTheReply(t *testing.T, p *cutter, s *redisstore.Store, tr core.Transition) (*core.Question, error) {
	t.Helper()
	p.arm(redisstore.ResolveHash())
	q, err := s.Resolve(t.Context(), tr)
	mustHaveCut(t, p)
	return q, err
}

func mustHaveCut(t *testing.T, p *cutter) {
	t.Helper()
	if p.cuts.Swap(0) != 1 {
		t.Fatal("the first run's reply was not lost: the test tests nothing")
	}
}

// TestReplayedCreateIsApplied: an ask whose first run's reply was lost,
// and which go-redis therefore sent again, is reported as created (the
// second run finds the question the first stored), not as an id taken;
// it is stored and announced once. Another question under the same id
// is still refused.
func TestReplayedCreateIsApplied(t *testing.T) {
	p, a, b := replayed(t)
	q := question(0, "run-1", t0)
	p.arm(redisstore.CreateHash())
	err := a.Create(t.Context(), q, event(q, core.EventAsked, t0), []core.Delivery{post(q, core.SurfaceSlack, "C1")})
	mustHaveCut(t, p)
	if err != nil {
		t.Fatalf("the replayed create: %v; want it created", err)
	}
	if got := mustGet(t, b, q.ID); !got.Open() || got.Text != q.Text {
		t.Fatalf("after the replayed create: %+v", got)
	}
	if k := kinds(t, b, q.ID); len(k) != 1 || k[0] != core.EventAsked {
		t.Fatalf("events %v, want one asked", k)
	}
	other := *q
	other.Text = "Which zone?"
	if err := b.Create(t.Context(), &other, event(&other, core.EventAsked, t0), nil); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("another question under the same id: %v, want a conflict", err)
	}
}

// TestReplayedCloseIsApplied: a close whose first run's reply was lost,
// and which go-redis therefore ran again, is reported as applied (the
// second run finds the question closed by the first), not as a loss; a
// close by anyone else afterwards still loses.
func TestReplayedCloseIsApplied(t *testing.T) {
	p, a, b := replayed(t)
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	got, err := resolveLosingTheReply(t, p, a, answer(q, "ada", t0))
	if err != nil {
		t.Fatalf("the replayed close: %v; want it applied", err)
	}
	if got.State != core.StateAnswered || got.Resolution == nil || got.Resolution.Decider.ID != "ada" {
		t.Fatalf("the replayed close returned %s %+v", got.State, got.Resolution)
	}
	var closed *core.ClosedError
	if _, err := b.Resolve(t.Context(), answer(q, "bob", t0)); !errors.As(err, &closed) {
		t.Fatalf("a close by someone else afterwards: %v, want it refused as closed", err)
	}
	n := 0
	for _, k := range kinds(t, b, q.ID) {
		if k == core.EventAnswered {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d answered events, want 1", n)
	}
}

// approveVote is who's vote to approve q, which two votes close.
func approveVote(q *core.Question, who string) core.Transition {
	d := decider(who)
	return core.Transition{QuestionID: q.ID, Now: t0, Needed: 2,
		Vote:       &core.Vote{Key: "person:" + who, Choice: core.ApproveOption, Decider: d, At: t0},
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: d, At: t0},
		VoteEvent:  event(q, core.EventVoted, t0), Event: event(q, core.EventAnswered, t0)}
}

// TestReplayedVoteIsApplied: a vote whose reply was lost and which was
// sent again is counted once and reported as counted, not as the voter's
// second vote; the same voter's next attempt is refused as before.
func TestReplayedVoteIsApplied(t *testing.T) {
	p, a, b := replayed(t)
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	vote := approveVote(q, "bob")
	got, err := resolveLosingTheReply(t, p, a, vote)
	if err != nil {
		t.Fatalf("the replayed vote: %v; want it counted", err)
	}
	if !got.Open() || len(got.Votes) != 1 {
		t.Fatalf("after the replayed vote: %s with %d votes", got.State, len(got.Votes))
	}
	if _, err := b.Resolve(t.Context(), vote); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("the same voter's next attempt: %v, want a conflict", err)
	}
}

// TestReplayedVoteIsNotTheClose: a vote that did not close the question,
// whose reply was lost, and which is sent again after another vote closed
// it, is reported as applied and not closing (AppliedError), not as the
// close: the close was the other voter's.
func TestReplayedVoteIsNotTheClose(t *testing.T) {
	p, a, b := replayed(t)
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	bob := make(chan error, 1)
	p.meanwhile = func() {
		_, err := b.Resolve(t.Context(), approveVote(q, "bob"))
		bob <- err
	}
	p.arm(redisstore.ResolveHash())
	_, err := a.Resolve(t.Context(), approveVote(q, "ada"))
	mustHaveCut(t, p)
	if bobErr := <-bob; bobErr != nil {
		t.Fatalf("bob's closing vote: %v", bobErr)
	}
	var applied *core.AppliedError
	if !errors.As(err, &applied) {
		t.Fatalf("ada's vote, sent again after bob's closed the question: %v; want an AppliedError", err)
	}
	if got := applied.Question; got.State != core.StateAnswered || got.Resolution.Decider.ID != "bob" || len(got.Votes) != 2 {
		t.Fatalf("the question with it: %s, closed by %+v, %d votes", got.State, got.Resolution, len(got.Votes))
	}
}

// TestReplayedRenotifyIsApplied: a renotice whose reply was lost and
// which was sent again is applied once (one count and one event, which
// its posts are enqueued with) and reported as applied, not as a deadline
// that moved, also when another replica's renotice landed in between; a
// later renotice by the same rule (the old deadline) is still refused.
func TestReplayedRenotifyIsApplied(t *testing.T) {
	for _, between := range []bool{false, true} {
		p, a, b := replayed(t)
		q := question(0, "run-1", t0)
		mustCreate(t, b, q)
		want := []core.EventKind{core.EventAsked, core.EventReminded}
		if between {
			other := make(chan error, 1)
			p.meanwhile = func() {
				err := b.Renotify(t.Context(), core.Renotice{QuestionID: q.ID, Now: t0, Event: event(q, core.EventReminded, t0)})
				other <- err
			}
			defer func() {
				if err := <-other; err != nil {
					t.Errorf("the renotice in between: %v", err)
				}
			}()
			want = append(want, core.EventReminded)
		}
		later := t0.Add(2 * time.Hour)
		rn := core.Renotice{QuestionID: q.ID, IfDeadline: q.Deadline, Deadline: later, Count: true, Now: t0,
			Event:      event(q, core.EventReminded, t0),
			Deliveries: []core.Delivery{post(q, core.SurfaceSlack, "C1")}}
		p.arm(redisstore.RenotifyHash())
		err := a.Renotify(t.Context(), rn)
		mustHaveCut(t, p)
		if err != nil {
			t.Fatalf("another renotice in between %v: the replayed renotice: %v; want it applied", between, err)
		}
		if got := mustGet(t, b, q.ID); got.Renotified != 1 || !got.Deadline.Equal(later) {
			t.Fatalf("after the replayed renotice: renotified %d, deadline %s", got.Renotified, got.Deadline)
		}
		if k := kinds(t, b, q.ID); !slices.Equal(k, want) {
			t.Fatalf("events %v, want %v", k, want)
		}
		if err := b.Renotify(t.Context(), rn); core.ErrorCode(err) != core.CodeConflict {
			t.Fatalf("the same rule again: %v, want the deadline moved", err)
		}
	}
}

// TestReplayedItemsAreApplied: form items whose reply was lost and which
// were sent again are recorded once and reported as recorded, not as
// given already; another attempt at the same item is refused as before.
func TestReplayedItemsAreApplied(t *testing.T) {
	p, a, b := replayed(t)
	q := formQuestion(0, "run-1", t0)
	mustCreate(t, b, q)
	ada := decider("ada")
	items := core.Transition{QuestionID: q.ID, Now: t0,
		Items:      []core.ItemAnswer{{ItemID: "day", OptionID: "fri", Decider: ada, At: t0}},
		Resolution: &core.Resolution{State: core.StateAnswered, Decider: ada, At: t0},
		ItemEvent:  event(q, core.EventItemAnswered, t0), Event: event(q, core.EventAnswered, t0)}
	got, err := resolveLosingTheReply(t, p, a, items)
	if err != nil {
		t.Fatalf("the replayed items: %v; want them recorded", err)
	}
	if !got.Open() || len(got.Answers) != 1 || got.Answers[0].OptionID != "fri" {
		t.Fatalf("after the replayed items: %s with %+v", got.State, got.Answers)
	}
	if _, err := b.Resolve(t.Context(), items); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("another attempt at the same item: %v, want a conflict", err)
	}
}

// TestReplayedBatchIsApplied: closes sent together, whose shared reply
// was lost, are each reported as applied when go-redis sends them again.
func TestReplayedBatchIsApplied(t *testing.T) {
	p, a, b := replayed(t)
	qs := make([]*core.Question, 40)
	for i := range qs {
		qs[i] = question(0, "run-1", t0)
		mustCreate(t, b, qs[i])
	}
	p.arm(redisstore.ResolveHash())
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() { _, errs[i] = a.Resolve(t.Context(), answer(q, "ada", t0)) })
	}
	wg.Wait()
	if p.cuts.Load() != 1 {
		t.Fatal("no reply was lost: the test tests nothing")
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("close %d: %v; want it applied", i, err)
		}
	}
}

// TestReplayedOnceIsFirst: a Once whose first run's reply was lost, and
// which go-redis therefore sent again, is still first (the second run
// finds its own mark); before, the resend found the key taken and a
// click was dropped as already seen. Another caller is still not first.
func TestReplayedOnceIsFirst(t *testing.T) {
	p, a, b := replayed(t)
	if _, err := b.Once(t.Context(), "seen:warm", time.Minute); err != nil { // Redis has the script by then (see replayed)
		t.Fatal(err)
	}
	p.arm("click-replayed")
	first, err := a.Once(t.Context(), "seen:click-replayed", time.Minute)
	mustHaveCut(t, p)
	if err != nil || !first {
		t.Fatalf("the replayed once: %v, %v; want first", first, err)
	}
	if again, err := b.Once(t.Context(), "seen:click-replayed", time.Minute); err != nil || again {
		t.Fatalf("another caller's once after it: %v, %v; want not first", again, err)
	}
}

// TestReplayedBeatTellsThePrevious: a Beat whose first run's reply was
// lost tells the heartbeat it replaced, not the one its first run wrote;
// before, a start whose beat was sent again saw no downtime.
func TestReplayedBeatTellsThePrevious(t *testing.T) {
	p, a, b := replayed(t)
	before, now := t0.Add(-time.Hour), t0
	if _, err := b.Beat(t.Context(), before); err != nil {
		t.Fatal(err)
	}
	p.arm(strconv.FormatInt(now.UnixMilli(), 10))
	prev, err := a.Beat(t.Context(), now)
	mustHaveCut(t, p)
	if err != nil || !prev.Equal(before) {
		t.Fatalf("the replayed beat told %v, %v; want %v", prev, err, before)
	}
	if prev, err := b.Beat(t.Context(), now.Add(time.Minute)); err != nil || !prev.Equal(now) {
		t.Fatalf("the next beat told %v, %v; want %v", prev, err, now)
	}
}

// TestReplayedAppendIsOnce: an event appended aside (a refusal) whose
// first run's reply was lost, and which go-redis therefore sent again, is
// in the log once, and the caller gets its seq; before, the resend
// appended it a second time.
func TestReplayedAppendIsOnce(t *testing.T) {
	p, a, b := replayed(t)
	q := question(0, "run-1", t0)
	mustCreate(t, b, q)
	// Redis has the script by then (see replayed).
	if _, err := b.Append(t.Context(), core.Event{QuestionID: q.ID, At: t0, Kind: core.EventRefused, Reason: "warm"}); err != nil {
		t.Fatal(err)
	}
	p.arm("replayed-refusal")
	e, err := a.Append(t.Context(), core.Event{QuestionID: q.ID, At: t0, Kind: core.EventRefused, Reason: "replayed-refusal"})
	mustHaveCut(t, p)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := b.Events(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, ev := range evs {
		if ev.Reason == "replayed-refusal" {
			seqs = append(seqs, ev.Seq)
		}
	}
	if len(seqs) != 1 || seqs[0] != e.Seq {
		t.Fatalf("the replayed append is in the log at %v; want once, at %d", seqs, e.Seq)
	}
}

// TestReplayedPurgeCountsOnce: a purge batch whose first run's reply was
// lost, and which go-redis therefore sent again, reports the questions
// its first run dropped, as core's purge loop counts on (a short batch
// ends it), and leaves one checkpoint; before, the resend found nothing
// left and the purge reported none of them.
func TestReplayedPurgeCountsOnce(t *testing.T) {
	p, a, b := replayed(t)
	var ids []core.QuestionID
	for i := range 3 {
		q := question(0, "run-purged", t0.Add(time.Duration(i)*time.Second))
		mustCreate(t, b, q)
		if _, err := b.Resolve(t.Context(), answer(q, "ada", t0.Add(time.Minute))); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.ID)
	}
	// The checkpoint's reason is only in the run that purges, not in the
	// plan before it.
	p.arm("retention")
	n, err := a.Purge(t.Context(), t0.Add(time.Hour), 0)
	mustHaveCut(t, p)
	if want := len(ids) + 1; err != nil || n != want { // and replayed's warm-up question
		t.Fatalf("the replayed purge: %d, %v; want %d purged", n, err, want)
	}
	for _, id := range ids {
		if _, err := b.Get(t.Context(), id); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("%s after the purge: %v; want it gone", id, err)
		}
	}
	evs, err := b.Events(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1+len(withoutCheckpoints(evs)) {
		t.Fatalf("%d checkpoints, want one", len(evs)-len(withoutCheckpoints(evs)))
	}
}
