package topology_test

import (
	"strconv"
	"testing"
	"time"

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
	t.Run("durable", func(t *testing.T) {
		d := &harness{dial: h.dial, shards: h.shards, durability: redisstore.Durability{Replicas: 1, Timeout: 2 * time.Second}}
		race(t, d)
		durable(t, d, func(key string) *redistest.Server {
			slot, err := c.Nodes[0].Do("CLUSTER", "KEYSLOT", key)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(slot)
			p, err := c.PrimaryOf(n)
			if err != nil {
				t.Fatal(err)
			}
			return c.ReplicaOf(p)
		})
	})
}

// TestSentinel runs the conformance suite and the replicas' race on a
// primary and a replica behind three Sentinels.
func TestSentinel(t *testing.T) {
	t.Parallel()
	ss := redistest.StartSentinels(t, 1)
	h := &harness{dial: redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}, shards: 1}
	t.Run("conformance", func(t *testing.T) {
		storetest.Run(t, storetest.Harness{Open: h.Open, Reopen: h.Reopen, Replica: h.Replica, Clocked: h.Clocked})
	})
	t.Run("race", func(t *testing.T) { race(t, h) })
	t.Run("durable", func(t *testing.T) {
		d := &harness{dial: h.dial, shards: h.shards, durability: redisstore.Durability{Replicas: 1, Timeout: 2 * time.Second}}
		race(t, d)
		durable(t, d, func(string) *redistest.Server { return ss.Data[1] })
		tooFew := &harness{dial: h.dial, shards: h.shards, durability: redisstore.Durability{Replicas: 2, Timeout: 50 * time.Millisecond}}
		maybeRecorded(t, tooFew)
	})
}
