package redis_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// With one shard, as on one server or behind Sentinel, a failover that
// loses the newest events (replication is asynchronous) must not make the
// next event reuse a number a reader has already seen: a reader paging by
// Seq, an SSE client reconnecting with Last-Event-ID, would skip it.
// The failover is played on one server: the stream, the counter and the
// question put back as a replica that missed the close held them.
func TestOneShardSeqNotReusedAfterFailover(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	s := newStoreOn(t, c, redisstore.Options{})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	qKey, _, evKey, seqKey, _, _, _, _ := redisstore.Keys(s, q.ID)
	_, resKey := redisstore.DocumentKeys(s, q.ID)
	lagging := map[string]string{}
	for _, k := range []string{evKey, seqKey, qKey} {
		v, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		lagging[k] = v
	}
	if _, err := s.Resolve(ctx, answer(q, "ada", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	seen, err := s.Events(ctx, 0, 0)
	if err != nil || len(seen) != 2 {
		t.Fatalf("events before the failover: %v, %v", seen, err)
	}
	last := seen[len(seen)-1].Seq

	// The failover: the replica promoted never got the close.
	if err := c.Del(ctx, resKey).Err(); err != nil {
		t.Fatal(err)
	}
	for k, v := range lagging {
		if err := c.RestoreReplace(ctx, k, 0, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustGet(t, s, q.ID); got.State != core.StateOpen {
		t.Fatalf("after the failover: %s", got.State)
	}
	at := t0.Add(time.Hour)
	closed, err := s.Resolve(ctx, core.Transition{QuestionID: q.ID,
		Resolution: &core.Resolution{State: core.StateTimedOut, Decider: decider("system"), At: at},
		Event:      event(q, core.EventTimedOut, at), Now: at})
	if err != nil || closed.State != core.StateTimedOut {
		t.Fatalf("the close after the failover: %v, %v", closed, err)
	}
	after, err := s.Events(ctx, last, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].Kind != core.EventTimedOut || after[0].QuestionID != q.ID {
		t.Fatalf("a reader that saw up to %d reads %+v after the failover; want the timed_out event", last, after)
	}
}
