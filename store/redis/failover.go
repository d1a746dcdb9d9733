package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Unavailable reports whether err, from this package's Store, says Redis
// is failing over or briefly out of reach rather than that something is
// broken: a caller may try again in a moment (the HTTP API's 503 with
// Retry-After). It is how a program tells the two apart where it maps
// errors to replies (httpapi.Options.Unavailable). Errors the Store marks
// itself (a durable write not confirmed in time, a probe that found a
// replica where the primary should be) also match core.ErrUnavailable.
//
// It classifies at the point of reply, not on every command: a hook on
// the client would cost every command of the hot path its own goroutine
// hop through the autopipeliner. No error (nil) is not a failover's.
func Unavailable(err error) bool {
	return errors.Is(err, core.ErrUnavailable) || failingOver(err)
}

// markErr marks err as a failover's (core.ErrUnavailable), for the
// errors the Store makes itself.
func markErr(err error) error {
	var u *unavailableError
	if errors.As(err, &u) {
		return err
	}
	return &unavailableError{err}
}

// unavailableError is a failover's error, marked. Its text is the cause's
// own, and it unwraps to it, so go-redis's checks of error prefixes and
// types still see the cause.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string        { return e.err.Error() }
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == core.ErrUnavailable }

// failingOver reports whether err is one a failover, or a server briefly
// out of reach, produces: what is asked may succeed if asked again in a
// moment. The server's refusals (READONLY from a demoted primary,
// CLUSTERDOWN, LOADING, MASTERDOWN, TRYAGAIN, NOREPLICAS under
// min-replicas-to-write, a redirect the client gave up following) and the
// network's (refused, reset, cut, timed out), and go-redis's word that it
// found no server at all. A context's end is the caller's and is left as
// it is; so is every other error of the server's (a script's bug, say).
func failingOver(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if goredis.IsReadOnlyError(err) || goredis.IsClusterDownError(err) || goredis.IsLoadingError(err) ||
		goredis.IsMasterDownError(err) || goredis.IsTryAgainError(err) || goredis.IsNoReplicasError(err) {
		return true
	}
	if isRedirect(err) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, goredis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // a dial that failed, a read that timed out: no answer came
	}
	// go-redis's own words when it finds no server to send to (no error
	// value is exported for them).
	msg := err.Error()
	return strings.HasPrefix(msg, "redis: all sentinels specified in configuration are unreachable") ||
		strings.HasPrefix(msg, "redis: cluster has no nodes")
}

// The errors a durable write (durable.go) marks unavailable, and how it
// follows a cluster's redirects: a slot a failover or a reshard moved
// makes its node refuse a write that any retry would send elsewhere.

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

// isRedirect reports whether err is a cluster node's MOVED or ASK.
func isRedirect(err error) bool {
	if _, ok := goredis.IsMovedError(err); ok {
		return true
	}
	_, ok := goredis.IsAskError(err)
	return ok
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
