package topology_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestSentinelFailoverWakesWatchers: two replicas of the bridge, B
// watching a question; Sentinel fails the primary over by hand; A answers
// on the new primary. B's watcher hears of it while the old primary still
// calls itself a primary: B's subscription to wake-ups follows the
// Sentinels' word (+switch-master) to the new primary, instead of staying
// on the old one until Sentinel makes it a replica (some 8 to 10 s), or
// for as long as a partition keeps it a primary.
func TestSentinelFailoverWakesWatchers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ss := redistest.StartSentinels(t, 2)
	d := redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}
	open := func() *redisstore.Store {
		st, err := redisstore.Connect(ctx, d, redisstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	b := open()
	q, err := coretest.Service(t, b, coretest.Options{}).Ask(ctx, core.AskInput{Kind: core.KindClarification, Agent: "a",
		RunID: "r", ToolCallID: "c1", Text: "Which region?", Reversibility: core.HardToReverse})
	if err != nil {
		t.Fatal(err)
	}
	ch, stop := b.Watch(q.ID)
	defer stop()

	old, err := ss.Primary()
	if err != nil {
		t.Fatal(err)
	}
	named := func() (addrs []string) {
		for _, s := range ss.Sentinels {
			v, _ := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", ss.Master)
			addrs = append(addrs, v)
		}
		return addrs
	}
	before := named()[0]
	if _, err := ss.Sentinels[0].Do("SENTINEL", "FAILOVER", ss.Master); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	// Every Sentinel names the new primary, so A, opened now, writes
	// there and nowhere else (the old one, still a primary, would take
	// the answer too, and wake B through the subscription under test).
	for n := named(); n[0] == before || slices.ContainsFunc(n, func(a string) bool { return a != n[0] }); n = named() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the Sentinels never agreed on a new primary: %v", n)
		}
	}
	a := open()
	if _, err := coretest.Service(t, a, coretest.Options{}).Answer(ctx, core.AnswerInput{QuestionID: q.ID,
		Decider: core.Decider{Surface: core.SurfaceAPI, ID: "ada"}, Text: "eu"}); err != nil {
		t.Fatalf("answer: %v", err)
	}
	answered := time.Now()
	// B looks whenever its watcher wakes (a reconnection wakes it too).
	for {
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("B's watcher never heard of the answer")
		}
		got, err := b.Get(ctx, q.ID)
		if err != nil || got.State == core.StateOpen {
			continue
		}
		role, err := old.Do("ROLE")
		t.Logf("B woken %s after the answer; the old primary's role: %.6s", time.Since(answered).Round(time.Millisecond), role)
		if err != nil || !strings.HasPrefix(role, "master") {
			t.Fatalf("B heard of the answer only once the old primary was made a replica (ROLE %q, %v)", role, err)
		}
		return
	}
}
