package topology_test

import (
	"testing"

	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
	"github.com/askbridge/askbridge/store/storetest"
)

// TestCluster runs the conformance suite and the replicas' race on a
// cluster of three primaries and three replicas, with six shards (which
// primaries they land on depends on each test's prefix).
func TestCluster(t *testing.T) {
	t.Parallel()
	c := redistest.StartReplicatedCluster(t, 3, 1)
	h := &harness{dial: redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}, shards: 6}
	t.Run("conformance", func(t *testing.T) {
		storetest.Run(t, storetest.Harness{Open: h.Open, Reopen: h.Reopen, Replica: h.Replica, Clocked: h.Clocked})
	})
	t.Run("race", func(t *testing.T) { race(t, h) })
	t.Run("a question's keys share a slot", func(t *testing.T) { keysOfAQuestion(t, c, h) })
}

// TestSentinel runs the conformance suite and the replicas' race on a
// primary and a replica behind three Sentinels.
func TestSentinel(t *testing.T) {
	t.Parallel()
	ss := redistest.StartSentinels(t)
	h := &harness{dial: redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}, shards: 1}
	t.Run("conformance", func(t *testing.T) {
		storetest.Run(t, storetest.Harness{Open: h.Open, Reopen: h.Reopen, Replica: h.Replica, Clocked: h.Clocked})
	})
	t.Run("race", func(t *testing.T) { race(t, h) })
}
