package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Sentinels is a primary and its replicas watched by three Sentinels,
// which fail the primary over to a replica when it dies.
type Sentinels struct {
	// Data are the primary and the replicas at the start; roles change
	// after a failover, the slice does not.
	Data      []*Server
	Sentinels []*Server
	// Master is the name the Sentinels monitor the primary by.
	Master string
	// link stands in front of the first primary (see link).
	link *link
}

// HoldReplication stops the first primary's stream to its replicas from
// arriving, for good, as a congested network would: the replicas fall
// behind while the primary goes on acknowledging writes, and what it
// acknowledges from then on is lost if it dies. (The first primary is
// reached through a relay that holds it; after a failover, Sentinel
// points everyone at the new primary's own address.)
func (ss *Sentinels) HoldReplication() { ss.link.hold() }

// StartSentinels starts a primary, replicas replicas of it and three
// Sentinels, and stops them when the test ends. It returns once every
// Sentinel sees the replicas and the other Sentinels.
func StartSentinels(t testing.TB, replicas int) *Sentinels {
	t.Helper()
	s, err := startSentinels(t.TempDir(), replicas)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func startSentinels(dir string, replicas int) (*Sentinels, error) {
	ss := &Sentinels{Master: "askbridge"}
	fail := func(err error) (*Sentinels, error) {
		ss.Close()
		return nil, err
	}
	primary, err := startWith(dir, func(port int) ([]string, error) { return serverArgs(port, dir, false), nil })
	if err != nil {
		return fail(err)
	}
	ss.Data = append(ss.Data, primary)
	l, err := newLink(primary.addr)
	if err != nil {
		return fail(err)
	}
	ss.link = l
	host, pport, _ := strings.Cut(l.addr(), ":")
	for range replicas {
		replica, err := startWith(dir, func(port int) ([]string, error) {
			return serverArgs(port, dir, false, "--replicaof", host, pport), nil
		})
		if err != nil {
			return fail(err)
		}
		ss.Data = append(ss.Data, replica)
		if err := waitFor(settleTimeout, func() (bool, string) {
			info, err := replica.Do("INFO", "replication")
			return err == nil && strings.Contains(info, "master_link_status:up"), info
		}); err != nil {
			return fail(fmt.Errorf("replica never synced: %w", err))
		}
	}
	for range 3 {
		s, err := startWith(dir, func(port int) ([]string, error) {
			conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", port))
			body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nloglevel warning\n"+
				"sentinel monitor %s %s %s 2\n"+
				"sentinel down-after-milliseconds %[3]s %[6]s\n"+
				"sentinel failover-timeout %[3]s 10000\n"+
				"sentinel parallel-syncs %[3]s 1\n",
				port, dir, ss.Master, host, pport, nodeTimeoutMS)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				return nil, err
			}
			return []string{conf, "--sentinel"}, nil
		})
		if err != nil {
			return fail(err)
		}
		ss.Sentinels = append(ss.Sentinels, s)
	}
	if err := ss.WaitHealthy(); err != nil {
		return fail(err)
	}
	return ss, nil
}

// URL is the set-up's address in go-redis's ParseFailoverURL form: the
// Sentinels, and the master's name.
func (ss *Sentinels) URL() string {
	u := "redis://" + ss.Sentinels[0].addr + "?master_name=" + ss.Master
	for _, s := range ss.Sentinels[1:] {
		u += "&addr=" + s.addr
	}
	return u
}

// Primary is the data node the Sentinels name as the primary now.
func (ss *Sentinels) Primary() (*Server, error) {
	for _, s := range ss.Sentinels {
		reply, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", ss.Master)
		if err != nil {
			continue
		}
		addr := strings.Replace(reply, " ", ":", 1)
		if addr == ss.link.addr() {
			addr = ss.Data[0].addr
		}
		for _, d := range ss.Data {
			if d.addr == addr {
				return d, nil
			}
		}
		return nil, fmt.Errorf("the Sentinels name %s, not a node of this set-up", addr)
	}
	return nil, fmt.Errorf("no Sentinel answers")
}

// WaitHealthy waits until every Sentinel names a live primary that is a
// primary, sees the other Sentinels and counts as many replicas as there
// are other live data nodes, each in sync: after the start, or after a
// failover.
func (ss *Sentinels) WaitHealthy() error {
	return waitFor(settleTimeout, func() (bool, string) {
		live := 0
		for _, d := range ss.Data {
			select {
			case <-d.exited:
			default:
				live++
			}
		}
		p, err := ss.Primary()
		if err != nil {
			return false, err.Error()
		}
		if role, err := p.Do("ROLE"); err != nil || !strings.HasPrefix(role, "master") {
			return false, "the named primary's role is " + role
		}
		named := p.addr // as the Sentinels name it
		if p == ss.Data[0] {
			named = ss.link.addr()
		}
		for _, s := range ss.Sentinels {
			info, err := s.Do("INFO", "sentinel")
			m := sentinelLine.FindStringSubmatch(info)
			if err != nil || m == nil || m[1] != named {
				return false, info
			}
			// A dead replica stays on the Sentinels' list, so it counts.
			if n, _ := strconv.Atoi(m[2]); n < live-1 || m[3] != strconv.Itoa(len(ss.Sentinels)) {
				return false, info
			}
		}
		for _, d := range ss.Data {
			if d == p {
				continue
			}
			select {
			case <-d.exited:
				continue
			default:
			}
			info, err := d.Do("INFO", "replication")
			if err != nil || !strings.Contains(info, "master_link_status:up") {
				return false, d.addr + ": " + info
			}
		}
		return true, ""
	})
}

// sentinelLine is INFO sentinel's line on the one master.
var sentinelLine = regexp.MustCompile(`status=ok,address=([^,]+),slaves=(\d+),sentinels=(\d+)`)

// Close kills every process.
func (ss *Sentinels) Close() {
	for _, s := range append(append([]*Server(nil), ss.Sentinels...), ss.Data...) {
		s.Close()
	}
	if ss.link != nil {
		ss.link.close()
	}
}

// Failover has the Sentinels fail the primary over by hand (SENTINEL
// FAILOVER) and waits until another node is the primary and the set-up
// has settled again; the old primary lives on as a replica.
func (ss *Sentinels) Failover() error {
	old, err := ss.Primary()
	if err != nil {
		return err
	}
	if _, err := ss.Sentinels[0].Do("SENTINEL", "FAILOVER", ss.Master); err != nil {
		return err
	}
	if err := waitFor(settleTimeout, func() (bool, string) {
		p, err := ss.Primary()
		return err == nil && p != old, fmt.Sprint(p, err)
	}); err != nil {
		return fmt.Errorf("the primary never moved: %w", err)
	}
	return ss.WaitHealthy()
}
