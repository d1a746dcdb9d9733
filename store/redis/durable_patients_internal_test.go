package redis

import (
	"fmt"
	"net"
	"sync"
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
	c.prune(map[string]*goredis.Client{last: new(goredis.Client)})
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

// TestPatientDoesNotWaitForTheSlotMap: the first wait sent to a new node
// is not held while the primaries are listed for prune (a CLUSTER SLOTS
// round trip, on no deadline of the caller's). Before, the list was made
// on the caller's goroutine, so a cluster slow to answer, as during the
// failover that brought the new node, held the transition as long.
func TestPatientDoesNotWaitForTheSlotMap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() { // a cluster node that accepts and never answers
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: []string{ln.Addr().String()}, ReadTimeout: time.Minute})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, conn := range conns {
			_ = conn.Close()
		}
		mu.Unlock()
		_ = cc.Close()
	})
	c := &durableClient{UniversalClient: cc, d: Durability{Replicas: 1, Timeout: time.Second}}
	node := goredis.NewClient(&goredis.Options{Addr: "10.0.0.1:6379"})
	t.Cleanup(func() { _ = node.Close() })
	done := make(chan struct{})
	go func() { c.patient(node); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the clone of a new node waited for the cluster's slot map")
	}
}
