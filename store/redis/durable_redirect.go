package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// errNoTimeLeft is a wait not sent: the waits of the tries before took
// all of Timeout.
var errNoTimeLeft = errors.New("the write had to be sent again, after a wait that took all the time")

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

// reload asks a cluster client to read its slot map again, in the
// background, after a write failed the way a failover does (or met a
// redirect it did not follow), so the caller's retry goes where the slot
// is now.
func (c *durableClient) reload(ctx context.Context) {
	if cc, ok := c.UniversalClient.(*goredis.ClusterClient); ok {
		cc.ReloadState(ctx)
	}
}

// route is where a durable write goes: a node, and whether it was asked
// there (ASK), so that its commands go behind ASKING.
type route struct {
	node goredis.Cmdable
	ask  bool
}

// redirected is where a MOVED or ASK err sends a write: the primary it
// names, found in the cluster client's slot map read again (so later
// writes go straight there too). A node the map does not list as a
// primary (one that serves no slot yet, being sent its first) is not
// followed: go-redis gives no client of its own for it, and the move
// ends within moments.
func (c *durableClient) redirected(ctx context.Context, err error) (route, bool) {
	addr, moved := goredis.IsMovedError(err)
	ask := false
	if !moved {
		if addr, ask = goredis.IsAskError(err); !ask {
			return route{}, false
		}
	}
	cc, ok := c.UniversalClient.(*goredis.ClusterClient)
	if !ok {
		return route{}, false
	}
	n := primaries(ctx, cc)[nodeAddr(addr)]
	if n == nil {
		return route{}, false
	}
	return route{node: n, ask: ask}, true
}

// nodeAddr is a redirect's address as go-redis writes a node's: an IPv6
// host in brackets (Redis may write it bare).
func nodeAddr(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i <= 0 || strings.HasPrefix(addr, "[") {
		return addr
	}
	return net.JoinHostPort(addr[:i], addr[i+1:])
}

// maxRedirects is how many redirects a write follows: as many as the
// cluster client follows for its own commands.
func (c *durableClient) maxRedirects() int {
	if cc, ok := c.UniversalClient.(*goredis.ClusterClient); ok {
		return cc.Options().MaxRedirects
	}
	return 0
}

// primaries are cc's primaries by address, as its slot map has them once
// read again (CLUSTER SLOTS; if no node answers, as it had them); nil if
// it could not say.
func primaries(ctx context.Context, cc *goredis.ClusterClient) map[string]*goredis.Client {
	live := map[string]*goredis.Client{}
	var mu sync.Mutex
	err := cc.ForEachMaster(ctx, func(_ context.Context, n *goredis.Client) error {
		mu.Lock()
		live[n.Options().Addr] = n
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil
	}
	return live
}

// queuedRedirect keeps the MOVED or ASK a command queued in a MULTI met,
// which EXEC reports only as EXECABORT.
type queuedRedirect struct{ seen *error }

func (queuedRedirect) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (queuedRedirect) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (h queuedRedirect) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if isRedirect(cmd.Err()) {
				*h.seen = cmd.Err()
			}
		}
		return err
	}
}
