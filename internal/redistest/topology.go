package redistest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The failure detection of the set-ups below is tuned for tests: a node
// or a primary silent for a second is down, and a replica may always be
// promoted. Production keeps the defaults (15 s, 30 s) or its own.
const (
	nodeTimeoutMS = "1000"
	// settleTimeout bounds how long a set-up, or a failover, may take to
	// settle before the test fails.
	settleTimeout = 30 * time.Second
)

// Cluster is a Redis Cluster of several primaries, each with its
// replicas, every node a private redis-server.
type Cluster struct {
	// Nodes are the primaries, in slot order, then their replicas:
	// Nodes[n+i] replicates Nodes[i%n] for n primaries. Roles change
	// after a failover; the slice does not.
	Nodes     []*Server
	primaries int
	ids       []string // Nodes' cluster ids
}

// StartReplicatedCluster starts a cluster of primaries primaries, the
// slots split evenly among them in order, each with replicas replicas,
// and stops it when the test ends. It returns once every node sees the
// cluster ok and every replica is in sync.
func StartReplicatedCluster(t testing.TB, primaries, replicas int) *Cluster {
	t.Helper()
	c, err := startCluster(t.TempDir(), primaries, replicas)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func startCluster(dir string, primaries, replicas int) (*Cluster, error) {
	if primaries < 1 || replicas < 0 {
		return nil, fmt.Errorf("a cluster of %d primaries and %d replicas each", primaries, replicas)
	}
	c := &Cluster{primaries: primaries}
	fail := func(err error) (*Cluster, error) {
		c.Close()
		return nil, err
	}
	for range primaries * (1 + replicas) {
		s, err := startWith(dir, func(port int) ([]string, error) {
			return serverArgs(port, dir, true,
				"--cluster-node-timeout", nodeTimeoutMS,
				"--cluster-replica-validity-factor", "0"), nil
		})
		if err != nil {
			return fail(err)
		}
		s.cluster = true
		c.Nodes = append(c.Nodes, s)
		id, err := s.Do("CLUSTER", "MYID")
		if err != nil {
			return fail(fmt.Errorf("cluster id of %s: %w", s.addr, err))
		}
		c.ids = append(c.ids, id)
	}
	first := c.Nodes[0]
	_, port, _ := strings.Cut(first.addr, ":")
	for _, s := range c.Nodes[1:] {
		if _, err := s.Do("CLUSTER", "MEET", "127.0.0.1", port); err != nil {
			return fail(fmt.Errorf("cluster meet: %w", err))
		}
	}
	for i := range primaries {
		lo, hi := i*16384/primaries, (i+1)*16384/primaries-1
		if _, err := c.Nodes[i].Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fail(fmt.Errorf("assign slots %d-%d: %w", lo, hi, err))
		}
	}
	// A replica may follow its primary only once it knows it.
	for i, s := range c.Nodes[primaries:] {
		primary := c.ids[i%primaries]
		if err := waitFor(settleTimeout, func() (bool, string) {
			nodes, err := s.Do("CLUSTER", "NODES")
			return err == nil && strings.Contains(nodes, primary), nodes
		}); err != nil {
			return fail(fmt.Errorf("node %s never learnt of %s: %w", s.addr, primary, err))
		}
		if _, err := s.Do("CLUSTER", "REPLICATE", primary); err != nil {
			return fail(fmt.Errorf("replicate %s: %w", primary, err))
		}
	}
	if err := c.WaitHealthy(); err != nil {
		return fail(err)
	}
	return c, nil
}

// URL is the cluster's address in go-redis's ParseClusterURL form: one
// seed node, and the others as addr=.
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].addr
	for i, s := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + s.addr
	}
	return u
}

// Addrs are every node's host:port.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		a[i] = s.addr
	}
	return a
}

// Close kills every node.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}

// PrimaryOf is the live node that serves slot as a primary.
func (c *Cluster) PrimaryOf(slot int) (*Server, error) {
	for _, s := range c.live() {
		if p, err := c.primaryOfOn(s, slot); err == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no live primary serves slot %d", slot)
}

// primaryOfOn is the primary of slot as node s sees the cluster.
func (c *Cluster) primaryOfOn(s *Server, slot int) (*Server, error) {
	nodes, err := s.Do("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && slot >= l && slot <= h {
				addr, _, _ := strings.Cut(f[1], "@")
				return c.node(addr)
			}
		}
	}
	return nil, fmt.Errorf("%s sees no primary serve slot %d", s.addr, slot)
}

// Primaries are the live nodes that are primaries now.
func (c *Cluster) Primaries() []*Server {
	var p []*Server
	for _, s := range c.live() {
		if role, err := s.Do("ROLE"); err == nil && strings.HasPrefix(role, "master") {
			p = append(p, s)
		}
	}
	return p
}

func (c *Cluster) node(addr string) (*Server, error) {
	for _, s := range c.Nodes {
		if s.addr == addr {
			return s, nil
		}
	}
	return nil, fmt.Errorf("no node %s", addr)
}

// live are the nodes not killed.
func (c *Cluster) live() []*Server {
	var l []*Server
	for _, s := range c.Nodes {
		select {
		case <-s.exited:
		default:
			l = append(l, s)
		}
	}
	return l
}

// WaitHealthy waits until every live node sees the cluster ok, every
// slot range has a live primary, and every live replica is in sync with
// its primary: after the start, or after a failover.
func (c *Cluster) WaitHealthy() error {
	live := c.live()
	return waitFor(settleTimeout, func() (bool, string) {
		primaries := 0
		for _, s := range live {
			info, err := s.Do("CLUSTER", "INFO")
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false, s.addr + ": " + info
			}
			repl, err := s.Do("INFO", "replication")
			if err != nil {
				return false, err.Error()
			}
			switch {
			case strings.Contains(repl, "role:master"):
				primaries++
			case !strings.Contains(repl, "master_link_status:up"):
				return false, s.addr + ": " + repl
			}
		}
		return primaries == c.primaries, fmt.Sprintf("%d primaries of %d", primaries, c.primaries)
	})
}

// waitFor polls ok until it holds or timeout passes; the error then
// carries ok's last word on what it saw. It is for processes settling
// (a cluster forming, a failover), not for the code under test.
func waitFor(timeout time.Duration, ok func() (bool, string)) error {
	// The servers say nothing when they settle, so they are asked again
	// every 50 ms until they have or the time is up.
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		done, saw := ok()
		if done {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("not settled within %s: %s", timeout, strings.TrimSpace(saw))
		case <-tick.C:
		}
	}
}

// ReplicaOf is a live replica of primary p, or nil.
func (c *Cluster) ReplicaOf(p *Server) *Server {
	for _, s := range c.live() {
		role, err := s.Do("ROLE")
		f := strings.Fields(role)
		if err == nil && len(f) >= 3 && f[0] == "slave" && f[1]+":"+f[2] == p.addr {
			return s
		}
	}
	return nil
}

// Failover has a replica of primary p take over by hand (CLUSTER
// FAILOVER) and waits until it serves as the primary and the cluster has
// settled again; p lives on as its replica.
func (c *Cluster) Failover(p *Server) error {
	r := c.ReplicaOf(p)
	if r == nil {
		return fmt.Errorf("no replica of %s", p.addr)
	}
	if _, err := r.Do("CLUSTER", "FAILOVER"); err != nil {
		return err
	}
	if err := waitFor(settleTimeout, func() (bool, string) {
		role, err := r.Do("ROLE")
		return err == nil && strings.HasPrefix(role, "master"), role
	}); err != nil {
		return fmt.Errorf("%s never took over: %w", r.addr, err)
	}
	return c.WaitHealthy()
}

// MoveSlot moves a hash slot, with its keys, to the primary dst, as
// redis-cli --cluster reshard does for the slots it picks: the two nodes
// mark the slot importing and migrating, its keys go over with MIGRATE,
// and then every primary is told its new owner. It returns once every
// node agrees.
func (c *Cluster) MoveSlot(slot int, dst *Server) error {
	m, err := c.BeginMove(slot, dst)
	if err != nil || m == nil {
		return err
	}
	return m.Finish()
}

// SlotMove is a slot on its way from one primary (Src) to another (Dst):
// marked migrating and importing, its keys going over as Keys moves them,
// until Finish. A test holds a slot half moved with it, as a reshard
// leaves one for as long as its keys take.
type SlotMove struct {
	c        *Cluster
	slot     string
	Src, Dst *Server
}

// BeginMove marks slot as moving from the primary that serves it to dst
// (another primary than that one, when dst is nil). It returns nil when
// dst serves the slot already.
func (c *Cluster) BeginMove(slot int, dst *Server) (*SlotMove, error) {
	src, err := c.PrimaryOf(slot)
	if err != nil {
		return nil, err
	}
	if dst == nil {
		for _, p := range c.Primaries() {
			if p != src {
				dst = p
				break
			}
		}
	}
	if dst == nil || src == dst {
		return nil, nil
	}
	m := &SlotMove{c: c, slot: strconv.Itoa(slot), Src: src, Dst: dst}
	if _, err := dst.Do("CLUSTER", "SETSLOT", m.slot, "IMPORTING", c.idOf(src)); err != nil {
		return nil, fmt.Errorf("importing: %w", err)
	}
	if _, err := src.Do("CLUSTER", "SETSLOT", m.slot, "MIGRATING", c.idOf(dst)); err != nil {
		return nil, fmt.Errorf("migrating: %w", err)
	}
	return m, nil
}

// Keys moves keys of the slot to Dst, with MIGRATE.
func (m *SlotMove) Keys(keys ...string) error {
	host, port, _ := strings.Cut(m.Dst.addr, ":")
	if _, err := m.Src.Do(append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)...); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Finish moves the slot's keys left and tells every primary its new
// owner, and returns once every node agrees.
func (m *SlotMove) Finish() error {
	for {
		keys, err := m.Src.Do("CLUSTER", "GETKEYSINSLOT", m.slot, "100")
		if err != nil {
			return err
		}
		if keys == "" {
			break
		}
		if err := m.Keys(strings.Fields(keys)...); err != nil {
			return err
		}
	}
	did := m.c.idOf(m.Dst)
	for _, s := range append([]*Server{m.Dst, m.Src}, m.c.Primaries()...) {
		if _, err := s.Do("CLUSTER", "SETSLOT", m.slot, "NODE", did); err != nil {
			return fmt.Errorf("setslot node on %s: %w", s.addr, err)
		}
	}
	slot, _ := strconv.Atoi(m.slot)
	return waitFor(settleTimeout, func() (bool, string) {
		for _, s := range m.c.live() {
			p, err := m.c.primaryOfOn(s, slot)
			if err != nil || p != m.Dst {
				return false, fmt.Sprint(s.addr, " sees ", p, err)
			}
		}
		return true, ""
	})
}

func (c *Cluster) idOf(s *Server) string {
	for i, n := range c.Nodes {
		if n == s {
			return c.ids[i]
		}
	}
	return ""
}
