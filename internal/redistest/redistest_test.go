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
