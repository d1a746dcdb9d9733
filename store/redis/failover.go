package redis

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
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

// isRedirect reports whether err is a cluster node's MOVED or ASK.
func isRedirect(err error) bool {
	if _, ok := goredis.IsMovedError(err); ok {
		return true
	}
	_, ok := goredis.IsAskError(err)
	return ok
}
