package redis_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestOutboxReclaimFromDeadConsumer: a consumer claims and dies without
// acking; another takes the delivery over once it has been idle past
// minIdle, and sees it as a retry. A minIdle of zero makes "idle long
// enough" true at once, so no waiting is needed.
func TestOutboxReclaimFromDeadConsumer(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"), post(q, core.SurfaceSlack, "C2"))

	first, err := s.Claim(ctx, core.SurfaceSlack, "doomed", 1, time.Hour, 0)
	if err != nil || len(first) != 1 || first[0].Attempts != 1 || first[0].Room != "C1" {
		t.Fatalf("doomed claims: %+v, %v", first, err)
	}
	// Another consumer gets the other, new delivery, not the leased one.
	second, err := s.Claim(ctx, core.SurfaceSlack, "heir", 10, time.Hour, 0)
	if err != nil || len(second) != 1 || second[0].Room != "C2" {
		t.Fatalf("heir's first claim: %+v, %v", second, err)
	}
	if err := s.Ack(ctx, core.SurfaceSlack, second[0].ID); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Claim(ctx, core.SurfaceSlack, "heir", 10, time.Hour, 0); err != nil || len(ds) != 0 {
		t.Fatalf("claim while leased: %+v, %v", ds, err)
	}
	// doomed is presumed dead: heir reclaims, as a retry.
	got, err := s.Claim(ctx, core.SurfaceSlack, "heir", 10, 0, 0)
	if err != nil || len(got) != 1 || got[0].Key != first[0].Key || got[0].Attempts != 2 {
		t.Fatalf("reclaim: %+v, %v", got, err)
	}
	// heir dies too; a third consumer sees the third attempt.
	got, err = s.Claim(ctx, core.SurfaceSlack, "third", 10, 0, 0)
	if err != nil || len(got) != 1 || got[0].Attempts != 3 {
		t.Fatalf("second reclaim: %+v, %v", got, err)
	}
	if err := s.Ack(ctx, core.SurfaceSlack, got[0].ID); err != nil {
		t.Fatal(err)
	}
	// Acked: gone for good, also for a late ack by the dead consumer.
	if err := s.Ack(ctx, core.SurfaceSlack, first[0].ID); err != nil {
		t.Fatalf("late ack: %v", err)
	}
	if ds, err := s.Claim(ctx, core.SurfaceSlack, "fourth", 10, 0, 0); err != nil || len(ds) != 0 {
		t.Fatalf("after ack: %+v, %v", ds, err)
	}
}

func TestOutboxInput(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	ctx := t.Context()
	for _, id := range []string{"", "x", "0/abc", "7/1-0/c", "0/1-0", "0/1-0/", "-1/1-0/c", "0/abc/c"} {
		if err := s.Ack(ctx, core.SurfaceSlack, id); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("ack %q: %v, want invalid", id, err)
		}
	}
	if _, err := s.Claim(ctx, core.SurfaceAPI, "c", 1, 0, 0); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("claim on the API: %v", err)
	}
	if err := s.Enqueue(ctx, []core.Delivery{{Key: "k", Surface: core.SurfaceConsole}}); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("enqueue to the console: %v", err)
	}
	for _, max := range []int{0, -1} {
		if _, err := s.Claim(ctx, core.SurfaceSlack, "c", max, 0, time.Hour); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("claim of %d: %v, want invalid", max, err)
		}
	}
	if _, err := s.Claim(ctx, core.SurfaceSlack, "", 1, 0, 0); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("claim without a consumer: %v, want invalid", err)
	}
}

// TestOutboxBlockingClaimAcrossShards: with several shards on one
// server, a blocked claim is woken by a delivery in any shard.
func TestOutboxBlockingClaimAcrossShards(t *testing.T) {
	s := newStore(t, redisstore.Options{Shards: 4})
	ctx := t.Context()
	for shard := range 4 {
		done := make(chan []core.Delivery, 1)
		go func() {
			ds, _ := s.Claim(ctx, core.SurfaceTelegram, "waiter", 10, time.Hour, 10*time.Second)
			done <- ds
		}()
		q := question(shard, "run-1", t0)
		mustCreate(t, s, q, post(q, core.SurfaceTelegram, "T"))
		select {
		case ds := <-done:
			if len(ds) != 1 || ds[0].QuestionID != q.ID {
				t.Fatalf("shard %d: woken claim %+v", shard, ds)
			}
			if err := s.Ack(ctx, core.SurfaceTelegram, ds[0].ID); err != nil {
				t.Fatal(err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("shard %d: blocked claim never returned", shard)
		}
	}
	// Nothing there: a short block returns empty.
	start := time.Now()
	ds, err := s.Claim(ctx, core.SurfaceTelegram, "waiter", 10, time.Hour, 50*time.Millisecond)
	if err != nil || len(ds) != 0 || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("empty claim: %v, %v after %s", ds, err, time.Since(start))
	}
}

// TestOutboxSurvivesLostGroup: if the streams vanish (a FLUSHALL, a
// failover to an empty replica), claims recreate the group.
func TestOutboxSurvivesLostGroup(t *testing.T) {
	c := newClient(t)
	prefix := randomPrefix()
	s := newStoreOn(t, c, redisstore.Options{Prefix: prefix})
	ctx := context.Background()
	keys, err := c.Keys(ctx, "{"+prefix+":s0}:out:*").Result()
	if err != nil || len(keys) != len(core.OutboxSurfaces) {
		t.Fatalf("outbox streams: %v, %v", keys, err)
	}
	if err := c.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Claim(ctx, core.SurfaceSlack, "c", 1, time.Hour, 0); err != nil || len(ds) != 0 {
		t.Fatalf("claim without group: %v, %v", ds, err)
	}
	if ds, err := s.Claim(ctx, core.SurfaceDiscord, "c", 1, time.Hour, 10*time.Millisecond); err != nil || len(ds) != 0 {
		t.Fatalf("blocking claim without group: %v, %v", ds, err)
	}
}

// TestOutboxUndecodableEntry: a corrupt entry is handed out without a
// kind (the outbox loop reports and acks it) instead of failing every
// claim behind it.
func TestOutboxUndecodableEntry(t *testing.T) {
	c := newClient(t)
	prefix := randomPrefix()
	s := newStoreOn(t, c, redisstore.Options{Prefix: prefix})
	ctx := t.Context()
	if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: "{" + prefix + ":s0}:out:slack", Values: []any{"d", "{not json"}}).Err(); err != nil {
		t.Fatal(err)
	}
	q := question(0, "run-1", t0)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	ds, err := s.Claim(ctx, core.SurfaceSlack, "c", 10, time.Hour, 0)
	if err != nil || len(ds) != 2 || ds[0].Kind != "" || ds[0].ID == "" || ds[1].QuestionID != q.ID {
		t.Fatalf("claim: %+v, %v", ds, err)
	}
	for _, d := range ds {
		if err := s.Ack(ctx, core.SurfaceSlack, d.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStartPrunesEmptyConsumers: every process start names a new consumer;
// a starting store removes the ones that hold nothing and have idled past
// the limit, and keeps any that still hold deliveries.
func TestStartPrunesEmptyConsumers(t *testing.T) {
	ctx := t.Context()
	opts := redisstore.Options{Prefix: randomPrefix()}
	c := newClient(t)
	s := newStoreOn(t, c, opts)
	q := question(0, "run-1", t0)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	if ds, err := s.Claim(ctx, core.SurfaceSlack, "holder", 10, time.Hour, 0); err != nil || len(ds) != 1 {
		t.Fatalf("claim: %v, %v", ds, err)
	}
	if ds, err := s.Claim(ctx, core.SurfaceSlack, "empty", 10, time.Hour, 0); err != nil || len(ds) != 0 {
		t.Fatalf("claim: %v, %v", ds, err)
	}
	defer redisstore.SetStaleConsumer(redisstore.SetStaleConsumer(0))
	newStoreOn(t, c, opts) // a replica starting
	stream := "{" + opts.Prefix + ":s0}:out:slack"
	cs, err := c.XInfoConsumers(ctx, stream, "askbridge").Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range cs {
		names = append(names, x.Name)
	}
	if len(names) != 1 || names[0] != "holder" {
		t.Fatalf("consumers after a start: %v, want only the one holding a delivery", names)
	}
}

// TestLeaveForgetsTheLeaverAndTheDead: a consumer that stops cleanly is
// removed from the group at once; a consumer still holding a delivery is
// kept whatever its idle time, so its work is reclaimed, never dropped.
func TestLeaveForgetsTheLeaverAndTheDead(t *testing.T) {
	c := newClient(t)
	opts := redisstore.Options{Prefix: randomPrefix()}
	s := newStoreOn(t, c, opts)
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	if ds, err := s.Claim(ctx, core.SurfaceSlack, "holder", 10, time.Hour, 0); err != nil || len(ds) != 1 {
		t.Fatalf("claim: %v, %v", ds, err)
	}
	stream := "{" + opts.Prefix + ":s0}:out:slack"
	for _, name := range []string{"leaver", "dead"} {
		if err := c.XGroupCreateConsumer(ctx, stream, "askbridge", name).Err(); err != nil {
			t.Fatal(err)
		}
	}
	consumers := func() []string {
		cs, err := c.XInfoConsumers(ctx, stream, "askbridge").Result()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range cs {
			names = append(names, x.Name)
		}
		return names
	}
	// An idle limit of an hour: only the leaver goes.
	if err := s.Leave(ctx, core.SurfaceSlack, "leaver", time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := consumers(); !cmp.Equal(got, []string{"dead", "holder"}) {
		t.Fatalf("after the leaver left: %v", got)
	}
	// An idle limit of zero: every consumer that holds nothing is dead.
	if err := s.Leave(ctx, core.SurfaceSlack, "", 0); err != nil {
		t.Fatal(err)
	}
	if got := consumers(); !cmp.Equal(got, []string{"holder"}) {
		t.Fatalf("after removing the dead: %v", got)
	}
}

// TestBudgetIsSharedByReplicas: two stores on one Redis, as two replicas,
// spend from one budget, so together they send at the platform's rate.
func TestBudgetIsSharedByReplicas(t *testing.T) {
	c := newClient(t)
	opts := redisstore.Options{Prefix: randomPrefix()}
	a, b := newStoreOn(t, c, opts), newStoreOn(t, newClient(t), opts)
	l := core.Limit{Rate: 2, Per: time.Minute, Burst: 2}
	sent := 0
	for i := range 6 {
		s := a
		if i%2 == 1 {
			s = b
		}
		w, err := s.Spend(t.Context(), "telegram:chat:-1001", l)
		if err != nil {
			t.Fatal(err)
		}
		if w == 0 {
			sent++
		}
	}
	if sent != 2 {
		t.Fatalf("two replicas sent %d times within a budget of 2", sent)
	}
	// Another prefix (another deployment on the same Redis) has its own.
	other := newStoreOn(t, c, redisstore.Options{Prefix: randomPrefix()})
	if w, err := other.Spend(t.Context(), "telegram:chat:-1001", l); err != nil || w != 0 {
		t.Fatalf("another deployment's budget: wait %s, %v", w, err)
	}
}

// TestOutboxCardUpdateLayouts: a card's update enqueued by a close (its
// parts in fields of their own) and one in the earlier layout (the whole
// delivery as JSON, as entries written before still are) claim as the
// same delivery; so does one that a waiting claim picks up.
func TestOutboxCardUpdateLayouts(t *testing.T) {
	c := newClient(t)
	prefix := randomPrefix()
	s := newStoreOn(t, c, redisstore.Options{Prefix: prefix})
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C1", ID: "1700.1", Delivery: string(q.ID) + ":post", At: t0}
	if err := s.RecordMessage(ctx, q.ID, ref, event(q, core.EventNotified, t0)); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	if _, err := s.Resolve(ctx, answer(q, "ada", at)); err != nil {
		t.Fatal(err)
	}
	// The card made version 1, the close version 2.
	want := core.Delivery{Key: string(q.ID) + "/update/2/1", Kind: core.DeliverUpdate, Surface: core.SurfaceSlack, Room: "C1",
		QuestionID: q.ID, Message: &ref, CreatedAt: at, Attempts: 1}
	old, _ := json.Marshal(want)
	claimed := func(block time.Duration) core.Delivery {
		t.Helper()
		ds, err := s.Claim(ctx, core.SurfaceSlack, "c", 1, time.Hour, block)
		if err != nil || len(ds) != 1 {
			t.Fatalf("claim: %+v, %v", ds, err)
		}
		if err := s.Ack(ctx, core.SurfaceSlack, ds[0].ID); err != nil {
			t.Fatal(err)
		}
		ds[0].ID = ""
		return ds[0]
	}
	if diff := cmp.Diff(want, claimed(0)); diff != "" {
		t.Fatalf("update from a close (-want +got):\n%s", diff)
	}
	if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: "{" + prefix + ":s0}:out:slack", Values: []any{"d", string(old)}}).Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, claimed(0)); diff != "" {
		t.Fatalf("update in the earlier layout (-want +got):\n%s", diff)
	}
	// A claim already waiting when the close comes (it reads the entry
	// itself when its blocking read gets it).
	done := make(chan core.Delivery, 1)
	go func() {
		ds, err := s.Claim(ctx, core.SurfaceSlack, "c", 1, time.Hour, 10*time.Second)
		if err != nil || len(ds) != 1 {
			t.Errorf("blocking claim: %+v, %v", ds, err)
			done <- core.Delivery{}
			return
		}
		ds[0].ID = ""
		done <- ds[0]
	}()
	q2 := question(0, "run-1", t0)
	mustCreate(t, s, q2)
	ref2 := ref
	ref2.Delivery = string(q2.ID) + ":post"
	if err := s.RecordMessage(ctx, q2.ID, ref2, event(q2, core.EventNotified, t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(ctx, answer(q2, "ada", at)); err != nil {
		t.Fatal(err)
	}
	want2 := want
	want2.Key, want2.QuestionID, want2.Message = string(q2.ID)+"/update/2/1", q2.ID, &ref2
	if diff := cmp.Diff(want2, <-done); diff != "" {
		t.Fatalf("update from a close, blocking claim (-want +got):\n%s", diff)
	}
}

// TestClaimPastAFailingShard: a shard whose claim fails does not cost
// the deliveries the other shards handed out in the same claim, which
// go out. Before, the whole claim failed, what the healthy shards had
// already put in the consumer's pending list stayed there until another
// consumer took it over, and while the shard failed nothing of that
// surface went out from any shard.
func TestClaimPastAFailingShard(t *testing.T) {
	c := newClient(t)
	prefix := randomPrefix()
	s := newStoreOn(t, c, redisstore.Options{Prefix: prefix, Shards: 2})
	ctx := t.Context()
	q := question(0, "run-1", t0)
	mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
	broken := "{" + prefix + ":s1}:out:slack"
	if err := c.Del(ctx, broken).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, broken, "not a stream", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for turn := range 2 { // each shard first once
		ds, err := s.Claim(ctx, core.SurfaceSlack, "a", 10, time.Hour, 0)
		if turn == 0 && (err != nil || len(ds) != 1 || ds[0].QuestionID != q.ID) {
			t.Fatalf("claim with shard 1 failing: %+v, %v; want shard 0's post", ds, err)
		}
		if turn == 1 && (err == nil || len(ds) != 0) {
			t.Fatalf("claim with nothing left but a failing shard: %+v, %v; want its error", ds, err)
		}
	}
}
