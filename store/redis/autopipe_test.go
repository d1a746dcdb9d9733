package redis_test

import (
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestConcurrentCallsShareConnections: fifty callers reading and closing
// questions at once go, past the few sent directly (DirectCalls), through
// the client's autopipeliner, so they share a few connections (each write
// carrying many callers' commands) instead of taking one each; and every
// close still lands exactly once.
func TestConcurrentCallsShareConnections(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: server.Addr(), PoolSize: 100})
	t.Cleanup(func() { _ = c.Close() })
	s := newStoreOn(t, c, redisstore.Options{})
	ctx := t.Context()
	const callers = 50
	qs := make([]*core.Question, callers)
	for i := range qs {
		qs[i] = question(0, "run-1", t0)
		mustCreate(t, s, qs[i])
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			for range 20 {
				if _, err := s.Get(ctx, qs[i].ID); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := s.Resolve(ctx, answer(qs[i], "ada", t0)); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	// 1,000 reads (two commands each) and 50 closes: on connections of
	// their own that would be about fifty connections and 1,050 round trips;
	// here DirectCalls connections at most for the calls sent directly, the
	// subscription's and the autopipeliner's few.
	st := c.PoolStats()
	if st.PipelineStats == nil {
		t.Fatal("the client has no pipeline pool")
	}
	conns, trips := st.TotalConns+st.PipelineStats.TotalConns, st.PipelineStats.Hits+st.PipelineStats.Misses
	t.Logf("%d connections, %d batches", conns, trips)
	if conns > 2*redisstore.DirectCalls || trips > 1050/4 {
		t.Errorf("%d connections and %d batches for 1,050 calls from 50 callers; want them shared", conns, trips)
	}
	for _, q := range qs {
		if got := mustGet(t, s, q.ID); got.State != core.StateAnswered {
			t.Fatalf("%s: %s, want answered", q.ID, got.State)
		}
	}
}
