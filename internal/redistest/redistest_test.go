package redistest_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/internal/redistest"
)

func TestStart(t *testing.T) {
	s := redistest.Start(t)
	if host, _, err := net.SplitHostPort(s.Addr()); err != nil || host != "127.0.0.1" {
		t.Fatalf("addr %q: %v", s.Addr(), err)
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING: %q, %v", got, err)
	}
	if got, err := s.Do("SET", "k", "v w"); err != nil || got != "OK" {
		t.Fatalf("SET: %q, %v", got, err)
	}
	if got, err := s.Do("GET", "k"); err != nil || got != "v w" {
		t.Fatalf("GET: %q, %v", got, err)
	}
	if _, err := s.Do("NOSUCHCOMMAND"); err == nil {
		t.Fatal("an unknown command did not fail")
	}
	// Nothing is kept on disk.
	if got, err := s.Do("CONFIG", "GET", "save"); err != nil {
		t.Fatalf("CONFIG GET: %q, %v", got, err)
	}
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") {
		t.Fatalf("url %q", s.URL())
	}
}

func TestTwoServersAreApart(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	if a.Addr() == b.Addr() {
		t.Fatal("two servers on one address")
	}
	if _, err := a.Do("SET", "only-a", "1"); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Do("EXISTS", "only-a"); err != nil || got != "0" {
		t.Fatalf("b sees a's key: %q, %v", got, err)
	}
}

func TestCloseStopsTheServer(t *testing.T) {
	s, err := redistest.StartServer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close() // twice is fine
	if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("server still accepts connections after Close")
	}
}

func TestCluster(t *testing.T) {
	s := redistest.StartCluster(t)
	info, err := s.Do("CLUSTER", "INFO")
	if err != nil || !strings.Contains(info, "cluster_slots_assigned:16384") {
		t.Fatalf("cluster info: %q, %v", info, err)
	}
}

// TestMissingServerSaysHowToInstall: without redis-server the error says
// how to get it (Start turns it into a failure, never a skip).
func TestMissingServerSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := redistest.StartServer(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "apt-get install redis-server") || !strings.Contains(err.Error(), "brew install redis") {
		t.Fatalf("error %v, want the install hint", err)
	}
}

func TestReplicatedClusterFailsOver(t *testing.T) {
	c := redistest.StartReplicatedCluster(t, 3, 1)
	if got := len(c.Primaries()); got != 3 {
		t.Fatalf("%d primaries, want 3", got)
	}
	if !strings.HasPrefix(c.URL(), "redis://"+c.Nodes[0].Addr()+"?addr=") || strings.Count(c.URL(), "addr=") != 5 {
		t.Fatalf("url %q", c.URL())
	}
	old, err := c.PrimaryOf(0)
	if err != nil || old != c.Nodes[0] {
		t.Fatalf("slot 0 is served by %v (%v), want the first node", old, err)
	}
	if p, err := c.PrimaryOf(16383); err != nil || p != c.Nodes[2] {
		t.Fatalf("slot 16383 is served by %v (%v), want the third node", p, err)
	}
	old.Close()
	if err := c.WaitHealthy(); err != nil {
		t.Fatal(err)
	}
	p, err := c.PrimaryOf(0)
	if err != nil || p != c.Nodes[3] {
		t.Fatalf("after the kill slot 0 is served by %v (%v), want its replica %s", p, err, c.Nodes[3].Addr())
	}
}

func TestSentinelsFailOver(t *testing.T) {
	ss := redistest.StartSentinels(t, 1)
	if got, want := ss.URL(), "redis://"+ss.Sentinels[0].Addr()+"?master_name=askbridge&addr="; !strings.HasPrefix(got, want) {
		t.Fatalf("url %q, want it to start %q", got, want)
	}
	p, err := ss.Primary()
	if err != nil || p != ss.Data[0] {
		t.Fatalf("primary %v (%v), want the first data node", p, err)
	}
	if _, err := p.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := ss.WaitHealthy(); err != nil {
		t.Fatal(err)
	}
	p, err = ss.Primary()
	if err != nil || p != ss.Data[1] {
		t.Fatalf("after the kill the primary is %v (%v), want the replica", p, err)
	}
	if got, err := p.Do("GET", "k"); err != nil || got != "v" {
		t.Fatalf("the promoted replica has k = %q (%v)", got, err)
	}
}
