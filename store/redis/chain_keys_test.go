package redis_test

import (
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/audit"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestAuditKeyChangeOnRedis: replicas restarted under a new audit key
// chain on after the events of the old one, and the log verifies given
// the old key as well (audit.Options.OldKeys), saying where it moved to
// the new one; an event a replica still on the old key appends after
// that is a break, as one forged with the old key would be.
func TestAuditKeyChangeOnRedis(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	prefix := randomPrefix()
	newKey := audit.Key("redis audit key, changed")
	before := newStoreOn(t, c, redisstore.Options{Prefix: prefix, AuditKey: auditKey})
	after := newStoreOn(t, c, redisstore.Options{Prefix: prefix, AuditKey: newKey})
	add := func(s *redisstore.Store, n int) {
		t.Helper()
		for i := range n {
			if _, err := s.Append(ctx, core.Event{Kind: core.EventRefused, Reason: "r", At: t0.Add(time.Duration(i) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	verify := func() audit.Report {
		t.Helper()
		rep, err := audit.Verify(newKey, audit.StoreWalk(ctx, after), audit.Options{OldKeys: []audit.Key{auditKey}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	add(before, 3)
	add(after, 2)
	rep := verify()
	if rep.Break != nil || rep.Events != 5 || len(rep.Keys) != 2 || rep.Keys[0].Key != 0 || rep.Keys[1].Key != 1 {
		t.Fatalf("report %+v; want five events, under the old key then the new", rep)
	}
	if rep, err := audit.Verify(newKey, audit.StoreWalk(ctx, after), audit.Options{}); err != nil || rep.Break == nil || !rep.Break.KeyMismatch {
		t.Fatalf("without the old key: %+v, %v; want a break that says no key matched", rep, err)
	}
	add(before, 1)
	if rep := verify(); rep.Break == nil || rep.Events != 6 {
		t.Fatalf("an event under the old key after the new: %+v; want a break at it", rep)
	}
}

// TestAuditEndCutUnderARunningReplica: events cut off a shard's stream
// (its counter set back to match) while a replica runs are found at that
// replica's next event, which witnesses the newest head it had seen: the
// embedded store's keyed record of its end has no Redis counterpart (a
// script must not hold the key), and this is what stands for it until
// every replica has restarted.
func TestAuditEndCutUnderARunningReplica(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	s, events := auditedLog(t, c)
	q := question(0, "run-3", t0)
	_, _, _, seq, _, _, _, _ := redisstore.Keys(s, q.ID)
	msgs, err := c.XRange(ctx, events, "-", "+").Result()
	if err != nil || len(msgs) != 6 {
		t.Fatalf("stream: %d entries, %v", len(msgs), err)
	}
	// Cut the last two and set the counter back to the fourth.
	for _, m := range msgs[4:] {
		if err := c.XDel(ctx, events, m.ID).Err(); err != nil {
			t.Fatal(err)
		}
	}
	fourth := msgs[3]
	n, _, _ := strings.Cut(fourth.ID, "-")
	chain := strings.Fields(fourth.Values["c"].(string))
	if err := c.Set(ctx, seq, n+" "+chain[3], 0).Err(); err != nil {
		t.Fatal(err)
	}
	if rep := verifyStore(t, s); rep.Break != nil || rep.Events != 4 {
		t.Fatalf("the cut stream alone: %+v; no link shows the cut", rep)
	}
	if _, err := s.Append(ctx, core.Event{Kind: core.EventRefused, Reason: "later", At: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if rep := verifyStore(t, s); rep.Break == nil || rep.Break.Seq == 0 || !strings.Contains(rep.Break.Reason, "witnesses") {
		t.Fatalf("after the running replica's next event: %+v; want a break at it", rep)
	}
}
