package redis

import (
	"fmt"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TestPatientClonesOfGoneNodesAreDropped: the patient clone of a node
// client is made once, and those of nodes no longer primaries go when a
// new node's clone is made. Before, every node client ever seen (a
// cluster's primary back at a new address, pod after pod) kept its
// closed client and clone, about 27 KB each, for the life of the process.
func TestPatientClonesOfGoneNodesAreDropped(t *testing.T) {
	c := &durableClient{d: Durability{Replicas: 1, Timeout: time.Second}}
	var last string
	for i := range 200 {
		last = fmt.Sprintf("10.0.%d.%d:6379", i/250, i%250)
		node := goredis.NewClient(&goredis.Options{Addr: last})
		if p := c.patient(node); p == goredis.Cmdable(node) || c.patient(node) != p {
			t.Fatalf("node %d: the clone is the node itself, or made twice", i)
		}
		_ = node.Close()
	}
	c.prune(map[string]bool{last: true})
	kept := 0
	c.patients.Range(func(_, _ any) bool { kept++; return true })
	if kept != 1 {
		t.Fatalf("%d clones kept for one live primary", kept)
	}
	c.prune(nil) // the primaries could not be listed
	if _, ok := c.patients.Load(last); !ok {
		t.Fatal("a live primary's clone was dropped")
	}
}
