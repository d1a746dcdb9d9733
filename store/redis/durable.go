package redis

import (
	"context"
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
// node that runs it (write: where the cluster's redirects lead).
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
func (c *durableClient) Process(ctx context.Context, cmd goredis.Cmder) error {
	args := cmd.Args()
	if len(args) < 4 || !acknowledged[fmt.Sprint(args[1])] {
		return c.UniversalClient.Process(ctx, cmd)
	}
	cmd.SetErr(c.write(ctx, fmt.Sprint(args[3]), cmd))
	return cmd.Err()
}

// write sends cmd (nil: only the marker) with the marker and the wait
// behind it, pipelined on one connection of the primary of key's slot,
// and returns cmd's error or else the wait's.
//
// A node that no longer serves the slot refuses the write unrun: MOVED
// (a reshard or a failover moved the slot) or ASK (the slot is moving
// and the write's keys have gone over). write then reads the slot map
// again and sends it all to the node named (behind ASKING for an ASK), so
// the wait counts the node that took the write; at most MaxRedirects
// times, as the cluster client would, so two nodes naming each other end
// in the redirect's error, marked (try again). NOSCRIPT (a restart, a
// failover, a node new to the slot, SCRIPT FLUSH) sends it again at once
// behind SCRIPT LOAD of every acknowledged script, once per node.
//
// Each send after the first waits what is left of Timeout (a refused
// write's own wait ran all the same), so the caller waits Timeout once;
// with nothing left, the change is made and its caller told it may not
// be held, as after any wait that ran out. No redirect is followed once
// the caller's context has ended.
func (c *durableClient) write(ctx context.Context, key string, cmd goredis.Cmder) error {
	node, err := c.nodeFor(ctx, key)
	if err != nil {
		return markErr(err)
	}
	// A write is sent again as a new command, whose reply is copied to
	// first; a command of another type is sent once.
	first, _ := cmd.(*goredis.Cmd)
	retriable := cmd == nil || first != nil
	start, to, try := time.Now(), route{node: node}, cmd
	var load []goredis.Cmder
	for sent, redirects, loaded := 0, 0, false; ; sent++ {
		left := c.d.Timeout
		if sent > 0 {
			left -= time.Since(start)
		}
		var wait goredis.Cmder
		if left >= time.Millisecond {
			wait = c.waitCmd(ctx, left)
		}
		marks := c.send(ctx, c.patient(to.node), key, to.ask, load, try, wait)
		var err error // cmd's, or with no cmd the marker's
		if try != nil {
			err = try.Err()
		} else if len(marks) > 0 {
			err = marks[0].Err()
		}
		if again, ok := try.(*goredis.Cmd); ok && again != first {
			first.SetVal(again.Val())
			first.SetErr(again.Err())
		}
		load = nil
		switch {
		case first != nil && !loaded && goredis.HasErrorPrefix(err, "NOSCRIPT"):
			load, loaded = scriptLoads(ctx), true
		case retriable && redirects < c.maxRedirects() && ctx.Err() == nil && isRedirect(err):
			next, ok := c.redirected(ctx, err)
			if !ok {
				return c.outcome(ctx, err, wait, marks)
			}
			to, loaded = next, false
			redirects++
		default:
			return c.outcome(ctx, err, wait, marks)
		}
		if first != nil {
			again := goredis.NewCmd(ctx, first.Args()...)
			again.SetFirstKeyPos(3)
			try = again
		}
	}
}

// outcome is a write's end: err, its own error (marked, if a failover's,
// so the caller is asked to retry, and a cluster client reads its slot
// map again before the retry), or else whether the wait held.
func (c *durableClient) outcome(ctx context.Context, err error, wait goredis.Cmder, marks []goredis.Cmder) error {
	if err != nil {
		if failingOver(err) {
			c.reload(ctx)
			return markErr(err)
		}
		return err
	}
	if wait == nil {
		return markErr(&durabilityError{d: c.d, err: errNoTimeLeft})
	}
	if err := c.held(wait, marks...); err != nil {
		return markErr(err)
	}
	return nil
}

// scriptLoads are SCRIPT LOAD of every acknowledged script.
func scriptLoads(ctx context.Context) []goredis.Cmder {
	var load []goredis.Cmder
	for _, sc := range acknowledgedScripts {
		load = append(load, goredis.NewStringCmd(ctx, "script", "load", sc.eval[1]))
	}
	return load
}

// send sends before (if any), cmd (if any) and, unless wait is nil, the
// marker and wait, pipelined on one connection of node, each command
// that names a key behind ASKING if asked (ASK: the node serves the
// slot's keys only to a client that says it was sent there). It returns
// the marker's commands, whose errors say whether the wait covers what
// the primary holds.
func (c *durableClient) send(ctx context.Context, node goredis.Cmdable, key string, asked bool, before []goredis.Cmder, cmd, wait goredis.Cmder) []goredis.Cmder {
	var marks []goredis.Cmder
	_, _ = node.Pipelined(ctx, func(p goredis.Pipeliner) error {
		asking := func() {
			if asked {
				p.Do(ctx, "asking")
			}
		}
		for _, b := range before {
			_ = p.Process(ctx, b)
		}
		if cmd != nil {
			asking()
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
		asking()
		marks = append(marks, p.Set(ctx, markerKey(key), "1", 0))
		if asked {
			// On the node a moving slot goes to, the marker is dropped
			// again: the node it comes from may hold one too, and the
			// move's MIGRATE would then find the key taken and stop.
			asking()
			marks = append(marks, p.Del(ctx, markerKey(key)))
		}
		_ = p.Process(ctx, wait)
		return nil
	})
	return marks
}

// confirm waits until the replicas hold everything the primary of key's
// slot holds now, for at most Timeout: the marker and wait alone, sent
// as write sends them (on to where the slot has moved).
func (c *durableClient) confirm(ctx context.Context, key string) error {
	return c.write(ctx, key, nil)
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
// the write. A marker that was refused (the slot moved between the
// write and its marker) leaves the wait vouching for older writes only,
// so it proves nothing.
func (c *durableClient) held(wait goredis.Cmder, marks ...goredis.Cmder) error {
	for _, m := range marks {
		if err := m.Err(); err != nil {
			return &durabilityError{d: c.d, err: fmt.Errorf("the durability marker: %w", err)}
		}
	}
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
// primary for its slot as the client's slot map has it (which a reshard
// or a failover leaves out of date until a redirect has it read again),
// or the client itself (one server, or the primary Sentinel names).
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
		go func() { c.prune(primaries(context.Background(), cc)) }()
	}
	return p.patient
}

// prune drops the clones of nodes whose addresses live does not hold.
func (c *durableClient) prune(live map[string]*goredis.Client) {
	if live == nil {
		return // the primaries could not be listed: keep everything
	}
	c.patients.Range(func(addr, _ any) bool {
		if live[addr.(string)] == nil {
			c.patients.Delete(addr)
		}
		return true
	})
}

// patientOf is a node client's patient clone.
type patientOf struct {
	of, patient *goredis.Client
}

// Watch runs fn in a WATCH transaction as the client would and, once fn
// has committed, waits on the transaction's own connection: the standing
// approvals change this way, not by script.
//
// A transaction the node sends on with MOVED (the slot moved: at WATCH,
// at a read, or at a command queued in the MULTI, which makes EXEC
// discard it all) wrote nothing, and runs again, fn and all, on the node
// named, up to MaxRedirects times. One sent on with ASK (the slot is
// moving, its key gone over) is not followed: ASKING holds for one
// command, and fn's are the caller's. Its caller is told to try again.
func (c *durableClient) Watch(ctx context.Context, fn func(*goredis.Tx) error, keys ...string) error {
	var node goredis.Cmdable = c.UniversalClient
	if len(keys) > 0 {
		n, err := c.nodeFor(ctx, keys[0])
		if err != nil {
			return markErr(err)
		}
		node = n
	}
	for redirects := 0; ; redirects++ {
		var on goredis.UniversalClient = c.UniversalClient
		if n, ok := c.patient(node).(*goredis.Client); ok {
			on = n
		}
		var queued error // a redirect a command queued in the MULTI met
		err := on.Watch(ctx, func(tx *goredis.Tx) error {
			tx.AddHook(queuedRedirect{&queued})
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
		if goredis.IsExecAbortError(err) && queued != nil {
			err = queued
		}
		if !isRedirect(err) {
			return err
		}
		if _, ask := goredis.IsAskError(err); !ask && redirects < c.maxRedirects() && ctx.Err() == nil {
			if next, ok := c.redirected(ctx, err); ok {
				node = next.node
				continue
			}
		}
		c.reload(ctx)
		return markErr(err)
	}
}

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
