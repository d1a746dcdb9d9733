package topology_test

import (
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestSentinelFailoverUnderLoad kills the primary (SIGKILL) under load,
// with durable acknowledgements on (one replica), and the Sentinels
// promote a replica. There are two, so that the new primary still has
// one to confirm writes: with one replica and one required, every write
// after a failover would be refused until the old primary came back.
func TestSentinelFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	ss := redistest.StartSentinels(t, 2)
	d := redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}
	failoverUnderLoad(t, d, redisstore.Options{Durability: redisstore.Durability{Replicas: 1, Timeout: time.Second}},
		fault{kill: killPrimary(t, ss), settle: ss.WaitHealthy}, false)
}

// killPrimary kills the primary the Sentinels name now.
func killPrimary(t *testing.T, ss *redistest.Sentinels) func() {
	return func() {
		p, err := ss.Primary()
		if err != nil {
			t.Error(err)
			return
		}
		p.Close()
	}
}

// TestSentinelLaggingReplica kills the primary while its replicas lag
// behind it (their replication held back). With durable acknowledgements
// on, the writes made meanwhile are refused with an honest 503 (no
// replica confirms them), and no acknowledged answer is lost. Without,
// the test measures what is lost (BENCHMARKS.md; run with
// -failover.long).
func TestSentinelLaggingReplica(t *testing.T) {
	t.Parallel()
	t.Run("durable", func(t *testing.T) {
		t.Parallel()
		ss := redistest.StartSentinels(t, 2)
		d := redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}
		res := failoverUnderLoad(t, d, redisstore.Options{Durability: redisstore.Durability{Replicas: 1, Timeout: 500 * time.Millisecond}},
			fault{stall: ss.HoldReplication, lagged: 8, kill: killPrimary(t, ss), settle: ss.WaitHealthy}, false)
		if res.unavailable == 0 && !t.Failed() {
			t.Error("nothing was refused while the replicas lagged: the stall did not hold them back")
		}
	})
	if !*longFailover {
		return
	}
	t.Run("not durable", func(t *testing.T) {
		t.Parallel()
		ss := redistest.StartSentinels(t, 2)
		d := redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}
		failoverUnderLoad(t, d, redisstore.Options{}, fault{stall: ss.HoldReplication, lagged: 100, kill: killPrimary(t, ss), settle: ss.WaitHealthy}, true)
	})
}

// TestClusterFailoverUnderLoad kills (SIGKILL) the cluster primary that
// serves the most shards, under load, with durable acknowledgements on
// (one replica), and one of its two replicas takes over.
func TestClusterFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	c := redistest.StartReplicatedCluster(t, 3, 2)
	d := redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}
	o := redisstore.Options{Shards: 6, Durability: redisstore.Durability{Replicas: 1, Timeout: time.Second}}
	st, err := redisstore.Connect(t.Context(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	spread, err := st.Spread(t.Context())
	_ = st.Close()
	if err != nil {
		t.Fatal(err)
	}
	busiest := ""
	for addr, shards := range spread {
		if busiest == "" || len(shards) > len(spread[busiest]) {
			busiest = addr
		}
	}
	failoverUnderLoad(t, d, o, fault{kill: func() {
		for _, n := range c.Nodes {
			if n.Addr() == busiest {
				n.Close()
			}
		}
	}, settle: c.WaitHealthy}, false)
}

// TestSentinelManualFailoverUnderLoad has the Sentinels fail the primary
// over by hand (SENTINEL FAILOVER) under load: the old primary lives on
// and is made a replica, so writes still sent to it meet READONLY.
//
// Durability asks for both replicas here. SENTINEL FAILOVER does not stop
// the old primary first: until it is demoted it goes on taking writes,
// and the replica not promoted goes on confirming them; both then follow
// the new primary and drop them. Asking for one replica, this test lost
// acknowledged asks; asking for every replica, a write made after the
// promotion cannot be confirmed (the promoted one has left) and gets an
// honest 503. A kill needs only one (the most advanced replica is the one
// promoted), and so does a cluster's CLUSTER FAILOVER, which pauses the
// old primary's clients until its replica has caught up.
func TestSentinelManualFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	ss := redistest.StartSentinels(t, 2)
	d := redisstore.Dial{Topology: redisstore.Sentinel, URL: ss.URL()}
	failoverUnderLoad(t, d, redisstore.Options{Durability: redisstore.Durability{Replicas: 2, Timeout: time.Second}},
		fault{kill: func() {
			if err := ss.Failover(); err != nil {
				t.Error(err)
			}
		}, settle: ss.WaitHealthy}, false)
}

// TestClusterManualFailoverUnderLoad has a replica of a cluster primary
// take over by hand (CLUSTER FAILOVER) under load.
func TestClusterManualFailoverUnderLoad(t *testing.T) {
	t.Parallel()
	c := redistest.StartReplicatedCluster(t, 3, 2)
	d := redisstore.Dial{Topology: redisstore.Cluster, URL: c.URL()}
	o := redisstore.Options{Shards: 6, Durability: redisstore.Durability{Replicas: 1, Timeout: time.Second}}
	failoverUnderLoad(t, d, o, fault{kill: func() {
		p, err := c.PrimaryOf(0)
		if err == nil {
			err = c.Failover(p)
		}
		if err != nil {
			t.Error(err)
		}
	}, settle: c.WaitHealthy}, false)
}
