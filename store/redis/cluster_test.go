package redis_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// TestCluster runs the store on a one-node Redis Cluster through
// go-redis's ClusterClient with several shards. The node serves every
// slot, so nothing moves, but it refuses any script or multi-key command
// whose keys span slots (CROSSSLOT), as a real cluster does.
func TestCluster(t *testing.T) {
	srv := redistest.StartCluster(t)
	newCluster := func(t *testing.T) goredis.UniversalClient {
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{srv.Addr()}})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	t.Run("slots agree with the server", func(t *testing.T) {
		for _, key := range []string{"foo", "{ab:s0}:q:x", "{ab:s31}:events", "{t1:s7}:out:slack"} {
			got, err := srv.Do("CLUSTER", "KEYSLOT", key)
			if err != nil {
				t.Fatal(err)
			}
			if want := strconv.Itoa(redisstore.Slot(key)); got != want {
				t.Fatalf("slot of %q: server says %s, we say %s", key, got, want)
			}
		}
	})

	t.Run("conformance", func(t *testing.T) {
		h := &harness{client: newCluster, shards: 4}
		storetest.Run(t, storetest.Harness{Open: h.Open, Reopen: h.Reopen, Replica: h.Replica, Clocked: h.Clocked})
	})

	t.Run("shards merge", func(t *testing.T) {
		const shards = 4
		s := newStoreOn(t, newCluster(t), redisstore.Options{Shards: shards})
		ctx := t.Context()
		var qs []*core.Question
		for i := range 3 * shards {
			q := question(i%shards, "run-1", t0.Add(time.Duration(i)*time.Second))
			mustCreate(t, s, q, post(q, core.SurfaceSlack, "C1"))
			qs = append(qs, q)
		}
		// Listing merges the shards in one order, page by page.
		var listed []core.QuestionID
		cursor := ""
		for {
			page, next, err := s.ListOpen(ctx, cursor, 5)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range page {
				listed = append(listed, q.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		for i, q := range qs {
			if i >= len(listed) || listed[i] != q.ID {
				t.Fatalf("listed %v, want creation order %v", listed, ids(qs))
			}
		}
		if got, err := s.Between(ctx, core.ByCreated, t0, t0.Add(time.Hour), 100); err != nil || len(got) != len(qs) || got[5].ID != qs[5].ID {
			t.Fatalf("between: %d, %v", len(got), err)
		}
		if due, err := s.Due(ctx, qs[6].Deadline, 100); err != nil || len(due) != 7 || due[6] != qs[6].ID {
			t.Fatalf("due: %v, %v", due, err)
		}
		// Every shard's questions close; events from all shards come back
		// with unique, increasing seqs, and paging by seq loses none.
		for _, q := range qs {
			if _, err := s.Resolve(ctx, answer(q, "ada", t0.Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
		}
		all, err := s.Events(ctx, 0, 1000)
		if err != nil || len(all) != 2*len(qs) {
			t.Fatalf("events: %d, %v", len(all), err)
		}
		var paged []core.Event
		since := int64(0)
		for {
			page, err := s.Events(ctx, since, 5)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			since = page[len(page)-1].Seq
		}
		if len(paged) != len(all) {
			t.Fatalf("paging by seq found %d of %d events", len(paged), len(all))
		}
		for i := 1; i < len(paged); i++ {
			if paged[i].Seq <= paged[i-1].Seq {
				t.Fatalf("seqs not increasing: %d then %d", paged[i-1].Seq, paged[i].Seq)
			}
		}
		// The outbox of every shard drains, and blocking waits in turn.
		if got := drain(t, s, core.SurfaceSlack); len(got) != len(qs) {
			t.Fatalf("drained %d deliveries, want %d", len(got), len(qs))
		}
		done := make(chan []core.Delivery, 1)
		go func() {
			ds, _ := s.Claim(ctx, core.SurfaceSlack, "w", 10, time.Hour, 10*time.Second)
			done <- ds
		}()
		late := question(3, "run-2", t0)
		mustCreate(t, s, late, post(late, core.SurfaceSlack, "C1"))
		select {
		case ds := <-done:
			if len(ds) != 1 || ds[0].QuestionID != late.ID {
				t.Fatalf("woken claim: %+v", ds)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("blocked claim never returned")
		}
		if n, err := s.Purge(ctx, t0.Add(2*time.Hour), 100); err != nil || n != len(qs) {
			t.Fatalf("purge: %d, %v", n, err)
		}
		ended, err := s.EndRun(ctx, core.Run{Agent: "agent-a", ID: "run-2"}.Key(), t0)
		if err != nil || len(ended) != 1 || ended[0] != late.ID {
			t.Fatalf("end run: %v, %v", ended, err)
		}
		ch, stop := s.Watch(late.ID)
		defer stop()
		if _, err := s.Resolve(ctx, answer(late, "ada", t0)); err != nil {
			t.Fatal(err)
		}
		waitSignal(t, ch, "cluster resolve")
	})
}

func ids(qs []*core.Question) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = fmt.Sprint(q.ID)
	}
	return out
}
