package redis_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/redistest"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// TestPingSaysWhenDurabilityLacksReplicas: with durability on, a primary
// with fewer replicas connected than it needs refuses every write (each
// waits out its timeout), so the store is not ready, and Ping says why;
// once the replica connects, it is. Before, Ping checked only that the
// primary answered as one, and /readyz said ready while every ask and
// answer was refused.
func TestPingSaysWhenDurabilityLacksReplicas(t *testing.T) {
	primary, replica := redistest.Start(t), redistest.Start(t)
	st := newStoreOn(t, newClientAt(t, primary.Addr()), redisstore.Options{Durability: redisstore.Durability{Replicas: 1, Timeout: time.Second}})
	err := st.Ping(t.Context())
	if err == nil || !strings.Contains(err.Error(), "0 of the 1 replicas durability needs connected") {
		t.Fatalf("ping with no replica: %v", err)
	}
	host, port, _ := net.SplitHostPort(primary.Addr())
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	waitInSync(t, primary)
	if err := st.Ping(t.Context()); err != nil {
		t.Fatalf("ping with its replica connected: %v", err)
	}
	// Without durability, replicas are not the store's concern.
	plain := newStoreOn(t, newClientAt(t, redistest.Start(t).Addr()), redisstore.Options{})
	if err := plain.Ping(t.Context()); err != nil {
		t.Fatalf("ping without durability and without replicas: %v", err)
	}
}
