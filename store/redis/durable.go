package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Durability makes every transition a caller is told succeeded wait
// until Replicas replicas hold it, or until Timeout, before the caller is
// told. Redis replicates asynchronously: without it, a write the primary
// acknowledged but had not yet sent to a replica is lost when that
// replica is promoted, and a person told "recorded" may never be heard.
//
// The wait is WAIT, or WAITAOF where every primary runs Redis 7.2 or
// later (or Valkey) with appendonly on, which also waits for the write to
// be fsynced to the primary's AOF and counts a replica once it has
// fsynced it to its own (so turn appendonly on there too). Either is
// sent right after the transition's script, pipelined on the same
// connection to the node that ran it: WAIT counts the writes of its own
// connection, so on another it would prove nothing.
//
// A wait that times out leaves the transition recorded on the primary but
// not known to be on the replicas: the caller gets an error marked
// core.ErrUnavailable ("maybe recorded"; the API's 503), and a retry
// learns the outcome, as for any lost reply.
//
// The scripts then publish no wake-up: the store publishes it once the
// wait has held (Store.announce), and wakes its own watchers only then,
// so no waiter is woken to read a change a failover may lose. A reader
// that reads by itself, not woken, can still see a change before its
// replicas hold it.
type Durability struct {
	// Replicas is how many replicas must hold a transition; 0 is off.
	Replicas int
	// Timeout bounds the wait; default one second. The pipeline that
	// carries a wait is read with the client's read timeout plus Timeout
	// (durableClient.patient), so a long wait is not cut short by it.
	Timeout time.Duration
}

// MaxDurabilityTimeout bounds Durability.Timeout: a caller (a person's
// click, an agent's ask) is not kept longer for it.
const MaxDurabilityTimeout = 10 * time.Second

func (d *Durability) fill() error {
	if d.Replicas == 0 {
		return nil
	}
	if d.Replicas < 0 {
		return core.Errorf(core.CodeInvalid, "redis store", "durability: %d replicas", d.Replicas)
	}
	if d.Timeout == 0 {
		d.Timeout = time.Second
	}
	if d.Timeout < time.Millisecond || d.Timeout > MaxDurabilityTimeout {
		return core.Errorf(core.CodeInvalid, "redis store", "durability timeout %s: between 1ms and %s", d.Timeout, MaxDurabilityTimeout)
	}
	return nil
}

// acknowledged are the scripts whose success a caller is told of: the
// transitions of a question, and a lease, which is a card's posting mark
// (a mark a failover lost would let the retry of a card already posted
// post it again, unflagged) and a reminder's claim. The outbox's own
// scripts are not waited for: a lost claim or ack is a delivery made
// again, which the outbox allows for anyway.
var (
	acknowledgedScripts = []script{createScript, resolveScript, renotifyScript, recordMessageScript, endRunScript, appendScript, leaseScript}
	acknowledged        = func() map[string]bool {
		m := map[string]bool{}
		for _, sc := range acknowledgedScripts {
			m[sc.sha[1].(string)] = true
			m[sc.eval[1].(string)] = true
		}
		return m
	}()
)

// durableClient is the Store's client when Durability is on: it passes
// everything through, except an acknowledged transition's script, which
// it sends with the wait behind it, pipelined on one connection of the
// node that owns the script's keys.
type durableClient struct {
	goredis.UniversalClient
	d Durability
	// aof: every primary runs 7.2+ with appendonly on (WAITAOF).
	aof bool
	// patients holds each node's patient clone, by the node's address
	// (a *patientOf), made once per node client. A cluster's primaries
	// change (a pod rescheduled at a new address): a new node's clone
	// drops those of nodes no longer primaries (prune).
	patients sync.Map
}

// newDurableClient checks the servers and wraps client.
func newDurableClient(ctx context.Context, client goredis.UniversalClient, d Durability) (*durableClient, error) {
	aof, err := canWaitAOF(ctx, client)
	if err != nil {
		return nil, err
	}
	return &durableClient{UniversalClient: client, d: d, aof: aof}, nil
}

// Process sends an acknowledged script and its wait together; anything
// else as the client would.
//
// A script Redis does not have (NOSCRIPT: after a restart, a failover or
// SCRIPT FLUSH) has had its wait all the same, as the pipeline went on.
// It is sent again at once, behind SCRIPT LOAD of every acknowledged
// script (so their first calls find them too), with a wait of what is
// left of Timeout: the caller waits Timeout once, not once per try. With
// nothing left (the first wait ran out: the replicas are slow), the
// change is made and its caller told it may not be held, as after any
// wait that ran out; a retry learns which.
func (c *durableClient) Process(ctx context.Context, cmd goredis.Cmder) error {
	args := cmd.Args()
	if len(args) < 4 || !acknowledged[fmt.Sprint(args[1])] {
		return c.UniversalClient.Process(ctx, cmd)
	}
	key := fmt.Sprint(args[3])
	node, err := c.nodeFor(ctx, key)
	if err != nil {
		cmd.SetErr(markErr(err))
		return cmd.Err()
	}
	node = c.patient(node)
	start := time.Now()
	wait := c.waitCmd(ctx, c.d.Timeout)
	c.send(ctx, node, key, nil, cmd, wait)
	if first, ok := cmd.(*goredis.Cmd); ok && goredis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		var load []goredis.Cmder
		for _, sc := range acknowledgedScripts {
			load = append(load, goredis.NewStringCmd(ctx, "script", "load", sc.eval[1]))
		}
		again := goredis.NewCmd(ctx, args...)
		again.SetFirstKeyPos(3)
		wait = nil
		if left := c.d.Timeout - time.Since(start); left >= time.Millisecond {
			wait = c.waitCmd(ctx, left)
		}
		c.send(ctx, node, key, load, again, wait)
		first.SetVal(again.Val())
		first.SetErr(again.Err())
	}
	if err := cmd.Err(); err != nil {
		// Marked, so the caller is asked to retry, and a cluster client
		// reads its slot map again before the retry.
		if failingOver(err) {
			cmd.SetErr(markErr(err))
			c.reload(ctx)
		}
		return cmd.Err()
	}
	if wait == nil {
		cmd.SetErr(markErr(&durabilityError{d: c.d, err: errNoTimeLeft}))
		return cmd.Err()
	}
	if err := c.held(wait); err != nil {
		cmd.SetErr(markErr(err))
		return cmd.Err()
	}
	return nil
}

// errNoTimeLeft is a wait not sent: the wait before Redis asked for the
// script whole took all of Timeout.
var errNoTimeLeft = errors.New("the script had to be loaded again, after a wait that took all the time")

// send sends before (if any), cmd (if any) and, unless wait is nil, the
// marker and wait, pipelined on one connection of node.
func (c *durableClient) send(ctx context.Context, node goredis.Cmdable, key string, before []goredis.Cmder, cmd, wait goredis.Cmder) {
	_, _ = node.Pipelined(ctx, func(p goredis.Pipeliner) error {
		for _, b := range before {
			_ = p.Process(ctx, b)
		}
		if cmd != nil {
			_ = p.Process(ctx, cmd)
		}
		if wait == nil {
			return nil
		}
		// WAIT counts up to this connection's last write. A script that
		// wrote nothing (a repeated ask finding its question, a retry
		// finding its answer recorded) would leave that at an older write,
		// and WAIT would vouch for what it found without knowing it is on
		// a replica. A write of a marker in the same slot moves it past
		// everything the primary holds, so the wait covers that too.
		p.Set(ctx, markerKey(key), "1", 0)
		_ = p.Process(ctx, wait)
		return nil
	})
}

// confirm waits until the replicas hold everything the primary of key's
// slot holds now, for at most Timeout: send's marker and wait alone.
func (c *durableClient) confirm(ctx context.Context, key string) error {
	node, err := c.nodeFor(ctx, key)
	if err != nil {
		return err
	}
	wait := c.waitCmd(ctx, c.d.Timeout)
	c.send(ctx, c.patient(node), key, nil, nil, wait)
	return c.held(wait)
}

// markerKey is the durability marker in the slot of key: the key's hash
// tag, or the key itself when it has none.
func markerKey(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i:i+j+2] + ":durable"
		}
	}
	return "{" + key + "}:durable"
}

// Watch runs fn in a WATCH transaction as the client would and, once fn
// has committed, waits on the transaction's own connection: the standing
// approvals change this way, not by script.
func (c *durableClient) Watch(ctx context.Context, fn func(*goredis.Tx) error, keys ...string) error {
	var on goredis.UniversalClient = c.UniversalClient
	if len(keys) > 0 {
		node, err := c.nodeFor(ctx, keys[0])
		if err != nil {
			return markErr(err)
		}
		if n, ok := c.patient(node).(*goredis.Client); ok {
			on = n
		}
	}
	return on.Watch(ctx, func(tx *goredis.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		wait := c.waitCmd(ctx, c.d.Timeout)
		_ = tx.Process(ctx, wait)
		if err := c.held(wait); err != nil {
			return markErr(err)
		}
		return nil
	}, keys...)
}

// waitCmd is the wait to send after a write, for at most timeout (1ms
// or more: 0 would be for ever): WAITAOF for the local AOF and the
// replicas, or WAIT for the replicas.
func (c *durableClient) waitCmd(ctx context.Context, timeout time.Duration) goredis.Cmder {
	ms := max(timeout.Milliseconds(), 1)
	if c.aof {
		return goredis.NewIntSliceCmd(ctx, "waitaof", 1, c.d.Replicas, ms)
	}
	return goredis.NewIntCmd(ctx, "wait", c.d.Replicas, ms)
}

// held checks the wait's reply: enough replicas (and the local AOF) have
// the write.
func (c *durableClient) held(wait goredis.Cmder) error {
	var local, replicas int64
	switch w := wait.(type) {
	case *goredis.IntCmd:
		n, err := w.Result()
		if err != nil {
			return &durabilityError{d: c.d, err: err}
		}
		local, replicas = 1, n
	case *goredis.IntSliceCmd:
		v, err := w.Result()
		if err != nil || len(v) != 2 {
			return &durabilityError{d: c.d, err: fmt.Errorf("WAITAOF: %v %v", v, err)}
		}
		local, replicas = v[0], v[1]
	}
	if local < 1 || replicas < int64(c.d.Replicas) {
		return &durabilityError{d: c.d, got: replicas, aof: c.aof}
	}
	return nil
}

// nodeFor is the client of the one server key lives on: the cluster's
// primary for its slot, or the client itself (one server, or the primary
// Sentinel names).
func (c *durableClient) nodeFor(ctx context.Context, key string) (goredis.Cmdable, error) {
	if cc, ok := c.UniversalClient.(*goredis.ClusterClient); ok {
		return cc.MasterForKey(ctx, key)
	}
	return c.UniversalClient, nil
}

// patient is node as a wait is sent to it: a clone whose read timeout
// is Timeout plus its own (at least a second: Redis ends a timed-out WAIT
// on its next cron tick, up to 100 ms late at the default hz). go-redis
// reads a pipeline's replies within the client's read timeout (3 s by
// default) and takes a wait cut short by it for a lost connection: it
// sends the whole pipeline again, up to MaxRetries times, so a Timeout
// above it would keep the caller several times as long and end in an i/o
// timeout. A node that is no *goredis.Client, or reads with no deadline,
// is used as it is.
func (c *durableClient) patient(node goredis.Cmdable) goredis.Cmdable {
	n, ok := node.(*goredis.Client)
	if !ok {
		return node
	}
	addr := n.Options().Addr
	if p, ok := c.patients.Load(addr); ok && p.(*patientOf).of == n {
		return p.(*patientOf).patient
	}
	p := &patientOf{of: n, patient: n}
	if rt := n.Options().ReadTimeout; rt > 0 {
		p.patient = n.WithTimeout(c.d.Timeout + max(rt, time.Second))
	}
	c.patients.Store(addr, p)
	if cc, ok := c.UniversalClient.(*goredis.ClusterClient); ok {
		// Listed in the background: listing reloads the slot map (a
		// round trip), which the caller's wait is not to wait for.
		go func() { c.prune(primaries(cc)) }()
	}
	return p.patient
}

// prune drops the clones of nodes whose addresses live does not hold.
func (c *durableClient) prune(live map[string]bool) {
	if live == nil {
		return // the primaries could not be listed: keep everything
	}
	c.patients.Range(func(addr, _ any) bool {
		if !live[addr.(string)] {
			c.patients.Delete(addr)
		}
		return true
	})
}

// primaries are the addresses of cc's primaries as its slot map has
// them now; nil if it could not say.
func primaries(cc *goredis.ClusterClient) map[string]bool {
	live := map[string]bool{}
	var mu sync.Mutex
	err := cc.ForEachMaster(context.Background(), func(_ context.Context, n *goredis.Client) error {
		mu.Lock()
		live[n.Options().Addr] = true
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil
	}
	return live
}

// patientOf is a node client's patient clone.
type patientOf struct {
	of, patient *goredis.Client
}

// reload asks a cluster client to read its slot map again, after the
// node it picked failed the way a moved slot or a failover does.
func (c *durableClient) reload(ctx context.Context) {
	if cc, ok := c.UniversalClient.(*goredis.ClusterClient); ok {
		cc.ReloadState(ctx)
	}
}

// durabilityError is a transition recorded on the primary that too few
// replicas confirmed in time: maybe recorded, maybe lost if the primary
// fails now.
type durabilityError struct {
	d   Durability
	got int64
	aof bool
	err error // the wait's own failure, if it failed
}

func (e *durabilityError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("recorded on the primary, but the wait for %d replicas failed: %v", e.d.Replicas, e.err)
	}
	how := "WAIT"
	if e.aof {
		how = "WAITAOF"
	}
	return fmt.Sprintf("recorded on the primary, but %s saw %d of %d replicas hold it within %s: it may be lost if the primary fails now",
		how, e.got, e.d.Replicas, e.d.Timeout)
}

func (e *durabilityError) Unwrap() error { return e.err }

// canWaitAOF reports whether every primary runs Redis 7.2 or later with
// appendonly on, so WAITAOF can be used.
func canWaitAOF(ctx context.Context, client goredis.UniversalClient) (bool, error) {
	check := func(ctx context.Context, c goredis.Cmdable) (bool, error) {
		info, err := c.Info(ctx, "server", "persistence").Result()
		if err != nil {
			return false, err
		}
		return waitAOFIn(info), nil
	}
	cc, ok := client.(*goredis.ClusterClient)
	if !ok {
		return check(ctx, client)
	}
	all := true
	var mu sync.Mutex
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error {
		ok, err := check(ctx, n)
		mu.Lock()
		all = all && ok
		mu.Unlock()
		return err
	})
	return all && err == nil, err
}

// waitAOFIn reads INFO's server and persistence sections: redis_version
// 7.2 or later (Valkey reports 7.2.4 there) and aof_enabled:1.
func waitAOFIn(info string) bool {
	var version string
	aof := false
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			version = v
		}
		if line == "aof_enabled:1" {
			aof = true
		}
	}
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	return aof && (ma > 7 || ma == 7 && mi >= 2)
}

// base is the client the Store was given, under the durable wrapper.
func (s *Store) base() goredis.UniversalClient {
	if d, ok := s.client.(*durableClient); ok {
		return d.UniversalClient
	}
	return s.client
}
