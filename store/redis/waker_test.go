package redis_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no wake-up", what)
	}
}

// TestWatchWakesAcrossReplicas: a change made through one Store wakes a
// watcher of another Store on the same Redis (another replica).
func TestWatchWakesAcrossReplicas(t *testing.T) {
	prefix := randomPrefix()
	a := newStore(t, redisstore.Options{Prefix: prefix, Shards: 2})
	b := newStore(t, redisstore.Options{Prefix: prefix, Shards: 2})
	ctx := t.Context()
	for shard := range 2 {
		q := question(shard, "run-1", t0)
		mustCreate(t, a, q)
		other := question(shard, "run-1", t0)
		mustCreate(t, a, other)
		ch, stop := b.Watch(q.ID)
		otherCh, stopOther := b.Watch(other.ID)
		if err := a.RecordMessage(ctx, q.ID, core.MessageRef{Surface: core.SurfaceSlack, Room: "C", ID: "1", Delivery: "d"}, core.Event{}); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, ch, "record message")
		if _, err := a.Resolve(ctx, answer(q, "ada", t0)); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, ch, "resolve")
		// The watcher of the other question was not woken. Resolve it too
		// and wait for that, so any stray signal would have arrived first.
		if _, err := a.Resolve(ctx, answer(other, "ada", t0)); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, otherCh, "resolve other")
		select {
		case <-ch:
			t.Fatal("a watcher was woken by another question's change")
		default:
		}
		stop()
		stopOther()
		stop() // stopping twice is harmless
	}
}

// TestWatchNeverBlocks: many changes and nobody reading leave one signal
// and never hold up the store.
func TestWatchNeverBlocks(t *testing.T) {
	s := newStore(t, redisstore.Options{})
	q := question(0, "run-1", t0)
	mustCreate(t, s, q)
	ch, stop := s.Watch(q.ID)
	defer stop()
	for range 5 {
		if err := s.Renotify(t.Context(), core.Renotice{QuestionID: q.ID, Count: true, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	waitSignal(t, ch, "five changes")
}

// TestCloseEndsSubscriber: Close stops the subscriber goroutine before
// it returns and, since Open made the client, closes it. Watchers are
// woken, so they look again and find the store closed.
func TestCloseEndsSubscriber(t *testing.T) {
	s, err := redisstore.Open(context.Background(), server.URL(), redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	ch, stop := s.Watch(core.NewID(0))
	defer stop()
	select {
	case <-redisstore.Stopped(s):
		t.Fatal("the subscriber stopped while the store is open")
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-redisstore.Stopped(s):
	default:
		t.Fatal("Close returned before the subscriber stopped")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	waitSignal(t, ch, "close")
	if err := s.Ping(context.Background()); err == nil {
		t.Fatal("the client Open made is still usable after Close")
	}
}

func TestNewDoesNotCloseCallersClient(t *testing.T) {
	c := newClient(t)
	s, err := redisstore.New(t.Context(), c, redisstore.Options{Prefix: randomPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("caller's client closed by the store: %v", err)
	}
}

func TestOptions(t *testing.T) {
	c := newClient(t)
	for _, o := range []redisstore.Options{{Prefix: "a{b"}, {Prefix: "a b"}, {Shards: -1}, {Shards: core.MaxShards + 1}} {
		if _, err := redisstore.New(t.Context(), c, o); core.ErrorCode(err) != core.CodeInvalid {
			t.Errorf("New(%+v): %v, want invalid", o, err)
		}
	}
	ring := goredis.NewRing(&goredis.RingOptions{Addrs: map[string]string{"one": server.Addr()}})
	defer ring.Close()
	if _, err := redisstore.New(t.Context(), ring, redisstore.Options{Prefix: randomPrefix(), Shards: 2}); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("a Ring with two shards: %v, want invalid", err)
	}
	rs := newStoreOn(t, ring, redisstore.Options{})
	q := question(0, "run-1", t0)
	mustCreate(t, rs, q)
	if _, err := rs.Resolve(t.Context(), answer(q, "ada", t0)); err != nil {
		t.Errorf("resolve on a Ring: %v", err)
	}
	if _, err := redisstore.Open(t.Context(), "http://nope", redisstore.Options{}); core.ErrorCode(err) != core.CodeInvalid {
		t.Errorf("Open with a bad URL: %v", err)
	}
	if _, err := redisstore.Open(t.Context(), "redis://127.0.0.1:1?max_retries=-1&dial_timeout=200ms", redisstore.Options{}); core.ErrorCode(err) != core.CodeInternal {
		t.Errorf("Open with nobody listening: %v", err)
	}
}

// TestWokenWatchersReadTheClose: after this Store closes a question that
// a local watcher waits on, reads of it are answered from the copy the
// close left (the hash is deleted behind the store's back to show it),
// equal to what a fresh read from Redis gives; the copy goes when the
// last watcher stops, and when this Store writes the question again.
func TestWokenWatchersReadTheClose(t *testing.T) {
	prefix := randomPrefix()
	a := newStore(t, redisstore.Options{Prefix: prefix})
	b := newStore(t, redisstore.Options{Prefix: prefix}) // another replica: no copy
	raw := newClient(t)
	ctx := t.Context()

	q := question(0, "run-1", t0)
	mustCreate(t, a, q)
	ch, stop := a.Watch(q.ID)
	tr := answer(q, "ada", t0)
	tr.Read = mustGet(t, a, q.ID)
	if _, err := a.Resolve(ctx, tr); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch, "close")
	got, want := mustGet(t, a, q.ID), mustGet(t, b, q.ID)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the woken read differs from Redis:\n got %+v\nwant %+v", got, want)
	}
	key, _, _, _, _, _, _, _ := redisstore.Keys(a, q.ID)
	if err := raw.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, a, q.ID); got.State != core.StateAnswered || got.Resolution == nil || got.Resolution.Answer != "from ada" {
		t.Fatalf("while watched, read %+v, want the close's copy", got)
	}
	stop()
	if _, err := a.Get(ctx, q.ID); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("after the last watcher stopped: %v, want the record's absence from Redis", err)
	}

	// A write by this Store after the close drops the copy at once.
	q2 := question(0, "run-1", t0)
	mustCreate(t, a, q2)
	ch2, stop2 := a.Watch(q2.ID)
	defer stop2()
	if _, err := a.Resolve(ctx, answer(q2, "ada", t0)); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, ch2, "close")
	ref := core.MessageRef{Surface: core.SurfaceSlack, Room: "C", ID: "late", Delivery: "late"}
	if err := a.RecordMessage(ctx, q2.ID, ref, core.Event{}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, a, q2.ID); len(got.Messages) != 1 || got.Messages[0].ID != "late" {
		t.Fatalf("after a card recorded past the close, read %+v, want it", got.Messages)
	}
}
