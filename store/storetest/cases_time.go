package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/google/go-cmp/cmp"
)

func init() {
	register("TimeoutDenyIsHonest", testTimeoutDeny)
	register("TimeoutEscalatesOnceThenDenies", testTimeoutEscalate)
	register("TimeoutReasksThenDenies", testTimeoutReask)
	register("ListOrderAndPagination", testListOrder)
	register("OutboxHandedOverAfterConsumerDies", testOutboxHandover)
	register("RetentionDropsOldClosedQuestions", testRetention)
	register("BootAfterDowntimeRemindsAndDigestsOnce", testBoot)
	register("CatchUpResumesWhereItStopped", testCatchUpResumes)
	register("EventsSinceAndBetween", testEventsBetween)
}

func (e *env) tick() core.TickReport {
	e.t.Helper()
	rep, err := e.svc.Tick(e.t.Context())
	if err != nil {
		e.t.Fatalf("tick: %v", err)
	}
	return rep
}

func testTimeoutDeny(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := clarification("run-1")
	in.Timeout = 10 * time.Minute
	q := e.ask(in)
	e.clock.Advance(9 * time.Minute)
	if rep := e.tick(); rep != (core.TickReport{}) {
		t.Fatalf("tick before the deadline did %+v", rep)
	}
	e.clock.Advance(time.Minute)
	if rep := e.tick(); rep.TimedOut != 1 {
		t.Fatalf("tick at the deadline did %+v", rep)
	}
	got := e.get(q.ID)
	if got.State != core.StateTimedOut || got.Resolution.Reason != core.TimeoutReason || got.Resolution.Decider.Surface != core.SurfaceSystem {
		t.Fatalf("timed out question: %+v", got.Resolution)
	}
	if rep := e.tick(); rep != (core.TickReport{}) {
		t.Fatalf("a closed question was timed out again: %+v", rep)
	}
}

func testTimeoutEscalate(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := decision("ops")
	in.Timeout, in.OnTimeout = time.Hour, core.OnTimeoutEscalate
	q := e.ask(in)
	e.claimAll(core.SurfaceSlack, "c")
	e.clock.Advance(time.Hour)
	// Two replicas tick at once: the escalation happens once.
	other := e.service()
	var wg sync.WaitGroup
	reps := make([]core.TickReport, 2)
	for i, svc := range []*core.Service{e.svc, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep, err := svc.Tick(t.Context())
			if err != nil {
				t.Errorf("tick: %v", err)
			}
			reps[i] = rep
		}()
	}
	wg.Wait()
	if reps[0].Escalated+reps[1].Escalated != 1 {
		t.Fatalf("escalations %+v, want exactly one", reps)
	}
	got := e.get(q.ID)
	if got.State != core.StateOpen || got.Renotified != 1 || !got.Deadline.Equal(epoch.Add(2*time.Hour)) {
		t.Fatalf("after escalation: state %s renotified %d deadline %s", got.State, got.Renotified, got.Deadline)
	}
	ds := e.claimAll(core.SurfaceDiscord, "c")
	if len(ds) != 1 || ds[0].Kind != core.DeliverEscalate || ds[0].Room != "D9" {
		t.Fatalf("escalation deliveries: %+v", ds)
	}
	// The escalation route's decider may now answer; before it could not.
	boss := core.Decider{Surface: core.SurfaceDiscord, ID: "boss", Name: "Boss"}
	if !e.svc.MayAnswer(got, boss) {
		t.Fatal("the escalation route's decider may not answer an escalated question")
	}
	e.clock.Advance(time.Hour)
	if rep := e.tick(); rep.TimedOut != 1 {
		t.Fatalf("second timeout: %+v, want timed out", rep)
	}
	want := []core.EventKind{core.EventAsked, core.EventEscalated, core.EventTimedOut}
	if got := coretest.Kinds(e.events(q.ID)); !cmp.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func testTimeoutReask(t *testing.T, h Harness) {
	e := newEnv(t, h)
	in := decision("ops")
	in.Timeout, in.OnTimeout, in.MaxReasks = 30*time.Minute, core.OnTimeoutReask, 2
	q := e.ask(in)
	e.claimAll(core.SurfaceSlack, "c")
	for i := 1; i <= 2; i++ {
		e.clock.Advance(30 * time.Minute)
		if rep := e.tick(); rep.Reasked != 1 {
			t.Fatalf("re-ask %d: %+v", i, rep)
		}
		ds := e.claimAll(core.SurfaceSlack, "c")
		if len(ds) != 1 || ds[0].Kind != core.DeliverRemind {
			t.Fatalf("re-ask %d deliveries: %+v", i, ds)
		}
	}
	e.clock.Advance(30 * time.Minute)
	if rep := e.tick(); rep.TimedOut != 1 {
		t.Fatalf("after the last re-ask: %+v", rep)
	}
	if got := e.get(q.ID); got.State != core.StateTimedOut || got.Renotified != 2 {
		t.Fatalf("state %s renotified %d", got.State, got.Renotified)
	}
}

func testListOrder(t *testing.T, h Harness) {
	e := newEnv(t, h)
	var want []core.QuestionID // hard-to-reverse oldest first, then the rest oldest first
	var soft []core.QuestionID
	for i := range 7 {
		in := clarification("run-1")
		if i%2 == 0 {
			in.Reversibility = core.Reversible
		}
		q := e.ask(in)
		if i%2 == 0 {
			soft = append(soft, q.ID)
		} else {
			want = append(want, q.ID)
		}
		e.clock.Advance(time.Second)
	}
	// Two questions in the same millisecond still page cleanly.
	same1, same2 := e.ask(clarification("run-1")), e.ask(clarification("run-1"))
	a, b := same1.ID, same2.ID
	if b < a {
		a, b = b, a
	}
	want = append(want, a, b)
	want = append(want, soft...)
	closed := e.ask(clarification("run-1"))
	if _, err := e.svc.Decline(t.Context(), closed.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	var got []core.QuestionID
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		qs, next, err := e.svc.ListOpen(t.Context(), cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(qs) > 2 {
			t.Fatalf("page of %d, limit 2", len(qs))
		}
		for _, q := range qs {
			got = append(got, q.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("open list order (-want +got):\n%s", diff)
	}
}

func testOutboxHandover(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q := e.ask(decision("ops"))
	ctx := t.Context()
	first, err := e.store.Claim(ctx, core.SurfaceSlack, "doomed", 10, time.Hour, 0)
	if err != nil || len(first) != 1 || first[0].QuestionID != q.ID || first[0].Attempts != 1 {
		t.Fatalf("first claim: %+v, %v", first, err)
	}
	// While the first consumer may still be alive, nobody else gets it.
	if ds, err := e.store.Claim(ctx, core.SurfaceSlack, "heir", 10, time.Hour, 0); err != nil || len(ds) != 0 {
		t.Fatalf("claim while leased: %+v, %v", ds, err)
	}
	// The consumer never acks: once its claim is idle past minIdle the
	// delivery is handed to another. Idle time is the store's own clock,
	// so wait for it, bounded.
	var got []core.Delivery
	deadline := time.Now().Add(10 * time.Second)
	for len(got) == 0 && time.Now().Before(deadline) {
		got, err = e.store.Claim(ctx, core.SurfaceSlack, "heir", 10, 20*time.Millisecond, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 || got[0].Key != first[0].Key || got[0].Attempts < 2 {
		t.Fatalf("handover: %+v", got)
	}
	if err := e.store.Ack(ctx, core.SurfaceSlack, got[0].ID); err != nil {
		t.Fatal(err)
	}
	if ds, err := e.store.Claim(ctx, core.SurfaceSlack, "heir", 10, 0, 0); err != nil || len(ds) != 0 {
		t.Fatalf("after ack: %+v, %v", ds, err)
	}
	// Only chat surfaces have outboxes: asking for another is a mistake,
	// said at once (not a wait that can never end well).
	if _, err := e.store.Claim(ctx, core.SurfaceAPI, "heir", 10, 0, time.Hour); core.ErrorCode(err) != core.CodeInvalid {
		t.Fatalf("claim on the api surface: %v, want invalid", err)
	}
	// A blocked claim is woken by a new delivery (or finds it at once if
	// the delivery lands before the claim starts waiting).
	e.claimAll(core.SurfaceTelegram, "drain") // the question's telegram post
	done := make(chan []core.Delivery, 1)
	go func() {
		ds, _ := e.store.Claim(ctx, core.SurfaceTelegram, "waiter", 10, time.Hour, 10*time.Second)
		done <- ds
	}()
	digest := core.Delivery{Key: "digest:1", Kind: core.DeliverDigest, Surface: core.SurfaceTelegram, Room: "-1001", Route: "ops", Since: epoch, CreatedAt: epoch}
	if err := e.store.Enqueue(ctx, []core.Delivery{digest}); err != nil {
		t.Fatal(err)
	}
	select {
	case woken := <-done:
		if len(woken) != 1 || woken[0].Kind != core.DeliverDigest || woken[0].Key != "digest:1" || !woken[0].Since.Equal(epoch) {
			t.Fatalf("woken claim: %+v", woken)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("blocked claim never returned")
	}
}

func testRetention(t *testing.T, h Harness) {
	e := newEnv(t, h)
	old := e.ask(clarification("run-1"))
	if _, err := e.svc.Decline(t.Context(), old.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	stillOpen := e.ask(clarification("run-1"))
	e.clock.Advance(29 * 24 * time.Hour)
	recent := e.ask(clarification("run-1"))
	if _, err := e.svc.Decline(t.Context(), recent.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * 24 * time.Hour) // old closed 31 days ago, recent 2
	n, err := e.svc.Purge(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("purge: %d, %v; want 1", n, err)
	}
	if _, err := e.svc.Get(t.Context(), old.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("purged question: %v", err)
	}
	if evs := e.events(old.ID); len(evs) != 0 {
		t.Fatalf("purged question's events remain: %v", coretest.Kinds(evs))
	}
	for _, id := range []core.QuestionID{stillOpen.ID, recent.ID} {
		e.get(id)
		if len(e.events(id)) == 0 {
			t.Fatalf("events of kept question %s were dropped", id)
		}
	}
	if n, err := e.svc.Purge(t.Context()); err != nil || n != 0 {
		t.Fatalf("second purge: %d, %v", n, err)
	}

	// Ended runs are bounded too: within the retention period an ask into
	// an ended run is refused; past it the marker is gone.
	if _, err := e.svc.EndRun(t.Context(), core.Run{Agent: "agent-a", ID: "run-old"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Ask(t.Context(), clarification("run-old")); core.ErrorCode(err) != core.CodeConflict {
		t.Fatalf("ask into a freshly ended run: %v", err)
	}
	e.clock.Advance(31 * 24 * time.Hour)
	if _, err := e.svc.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Ask(t.Context(), clarification("run-old")); err != nil {
		t.Fatalf("the ended-run marker outlived retention: %v", err)
	}
}

func testBoot(t *testing.T, h Harness) {
	e := newEnv(t, h)
	if rep, err := e.svc.Boot(t.Context()); err != nil || !rep.LastBeat.IsZero() || rep.Down != 0 {
		t.Fatalf("first boot: %+v, %v", rep, err)
	}
	q1, q2 := e.ask(decision("ops")), e.ask(clarification("run-1"))
	closed := e.ask(clarification("run-1"))
	if _, err := e.svc.Decline(t.Context(), closed.ID, apiDecider("op")); err != nil {
		t.Fatal(err)
	}
	e.claimAll(core.SurfaceSlack, "c")
	e.claimAll(core.SurfaceTelegram, "c")
	e.clock.Advance(time.Minute)
	if rep, err := e.svc.Boot(t.Context()); err != nil || rep.Down != 0 {
		t.Fatalf("boot after a short gap: %+v, %v", rep, err)
	}
	if n, done, err := e.svc.CatchUp(t.Context(), "r1"); err != nil || n != 0 || !done {
		t.Fatalf("catch-up with no downtime: %d, %v, %v", n, done, err)
	}
	e.clock.Advance(2 * time.Hour)
	e.restart()
	rep, err := e.svc.Boot(t.Context())
	if err != nil || rep.Down != 2*time.Hour || rep.Digests != 4 { // one per room of the routes naming accounts (slack, telegram, discord) and Bob's DM
		t.Fatalf("boot after downtime: %+v, %v", rep, err)
	}
	// Boot only records the downtime; the bridge serves before the
	// reminders are stored, and a question asked now was never missed.
	e.clock.Advance(time.Second)
	fresh := e.ask(clarification("run-1"))
	n, done, err := e.svc.CatchUp(t.Context(), "r1")
	if err != nil || n != 2 || !done {
		t.Fatalf("catch-up after downtime: %d reminded, done %v, %v; want 2", n, done, err)
	}
	if kinds := coretest.Kinds(e.events(fresh.ID)); len(kinds) != 1 {
		t.Fatalf("a question asked after the boot was reminded: %v", kinds)
	}
	if n, done, err := e.svc.CatchUp(t.Context(), "r2"); err != nil || n != 0 || !done {
		t.Fatalf("second catch-up: %d, %v, %v; want nothing left", n, done, err)
	}
	for _, id := range []core.QuestionID{q1.ID, q2.ID} {
		kinds := coretest.Kinds(e.events(id))
		if kinds[len(kinds)-1] != core.EventReminded {
			t.Fatalf("%s events %v: want a reminder last", id, kinds)
		}
	}
	slack := e.claimAll(core.SurfaceSlack, "c")
	var reminds, digests int
	for _, d := range slack {
		switch d.Kind {
		case core.DeliverRemind:
			reminds++
		case core.DeliverDigest:
			digests++
			if d.Route != "ops" || !d.Since.Equal(epoch.Add(time.Minute)) {
				t.Fatalf("digest delivery %+v", d)
			}
		}
	}
	if reminds != 1 || digests != 1 {
		t.Fatalf("slack got %d reminders and %d digests, want 1 and 1: %+v", reminds, digests, slack)
	}
	// A second replica booting right after sees a fresh beat: no repeat.
	if rep, err := e.service().Boot(t.Context()); err != nil || rep.Down != 0 || rep.Digests != 0 {
		t.Fatalf("second boot: %+v, %v", rep, err)
	}
}

func testEventsBetween(t *testing.T, h Harness) {
	e := newEnv(t, h)
	q1 := e.ask(clarification("run-1"))
	e.clock.Advance(time.Hour)
	mark := e.clock.Now()
	q2 := e.ask(decision("ops"))
	if _, err := e.svc.Answer(t.Context(), core.AnswerInput{QuestionID: q1.ID, Decider: apiDecider("op"), Text: "yes"}); err != nil {
		t.Fatal(err)
	}
	all, err := e.store.Events(t.Context(), 0, 100)
	if err != nil || len(all) != 3 {
		t.Fatalf("events: %v, %v", all, err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Fatalf("seq not increasing: %d then %d", all[i-1].Seq, all[i].Seq)
		}
	}
	after, err := e.store.Events(t.Context(), all[0].Seq, 100)
	if err != nil || len(after) != 2 || after[0].Seq != all[1].Seq {
		t.Fatalf("events since %d: %v, %v", all[0].Seq, after, err)
	}
	if limited, _ := e.store.Events(t.Context(), 0, 1); len(limited) != 1 {
		t.Fatalf("limit 1 gave %d", len(limited))
	}
	d, err := e.svc.Digest(t.Context(), core.DigestQuery{From: mark, To: mark.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Asked) != 1 || d.Asked[0].ID != q2.ID || len(d.Closed) != 1 || d.Closed[0].ID != q1.ID || len(d.Open) != 1 || d.Open[0].ID != q2.ID {
		t.Fatalf("digest: asked %d closed %d open %d", len(d.Asked), len(d.Closed), len(d.Open))
	}
	// For one decider: only routes they may answer.
	slackLead := core.Decider{Surface: core.SurfaceSlack, ID: "U1"}
	d, err = e.svc.Digest(t.Context(), core.DigestQuery{From: epoch, To: mark.Add(time.Minute), Decider: &slackLead})
	if err != nil || len(d.Asked) != 1 || d.Asked[0].ID != q2.ID || len(d.Closed) != 0 {
		t.Fatalf("digest for a slack decider: %+v, %v", d, err)
	}
}

// failingRenotify fails every Renotify after the first ok calls, as a
// store going away part way through would.
type failingRenotify struct {
	core.Store
	mu sync.Mutex
	ok int
}

func (f *failingRenotify) Renotify(ctx context.Context, r core.Renotice) error {
	f.mu.Lock()
	pass := f.ok > 0
	f.ok--
	f.mu.Unlock()
	if !pass {
		return errors.New("store went away")
	}
	return f.Store.Renotify(ctx, r)
}

// testCatchUpResumes: a catch-up cut short goes on after a restart from
// the last page it finished, and every open question ends up reminded
// exactly once.
func testCatchUpResumes(t *testing.T, h Harness) {
	e := newEnv(t, h)
	if _, err := e.svc.Boot(t.Context()); err != nil {
		t.Fatal(err)
	}
	const open, page = 130, 100 // page is core's catch-up page
	ids := make([]core.QuestionID, open)
	for i := range ids {
		ids[i] = e.ask(clarification("run-1")).ID
	}
	e.clock.Advance(2 * time.Hour)
	e.restart()
	if rep, err := e.svc.Boot(t.Context()); err != nil || rep.Down != 2*time.Hour {
		t.Fatalf("boot after downtime: %+v, %v", rep, err)
	}
	flaky := &failingRenotify{Store: e.store, ok: page}
	cut, err := core.New(flaky, config("storetest-key"), e.clock)
	if err != nil {
		t.Fatal(err)
	}
	n, done, err := cut.CatchUp(t.Context(), "r1")
	if err == nil || done || n != page {
		t.Fatalf("cut-short catch-up: %d reminded, done %v, err %v; want %d and an error", n, done, err, page)
	}
	e.restart()
	n, done, err = e.svc.CatchUp(t.Context(), "r1")
	if err != nil || !done || n != open-page {
		t.Fatalf("resumed catch-up: %d reminded, done %v, %v; want %d", n, done, err, open-page)
	}
	for _, id := range ids {
		got := 0
		for _, k := range coretest.Kinds(e.events(id)) {
			if k == core.EventReminded {
				got++
			}
		}
		if got != 1 {
			t.Fatalf("%s was reminded %d times, want once", id, got)
		}
	}
}
