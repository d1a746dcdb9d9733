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

// failoverHook marks, on every command the client sends, the errors a
// failover or an unreachable server produces, so that they reach core as
// core.ErrUnavailable (a retryable 503 at the API) rather than as a
// failure of ours. It is one hook on the client, so every path of the
// Store (scripts, reads, the outbox, budgets) is covered in one place; it
// only looks at a command's result after the command ran, as go-redis
// asks of a hook.
type failoverHook struct{}

func (failoverHook) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil && failingOver(err) {
			err = &unavailableError{err}
		}
		return c, err
	}
}

func (failoverHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		mark(cmd)
		if err != nil && failingOver(err) {
			return markErr(err)
		}
		return err
	}
}

func (failoverHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			mark(c)
		}
		if err != nil && failingOver(err) {
			return markErr(err)
		}
		return err
	}
}

// mark wraps cmd's error if a failover made it.
func mark(cmd goredis.Cmder) {
	if err := cmd.Err(); err != nil && failingOver(err) {
		cmd.SetErr(markErr(err))
	}
}

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
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if goredis.IsReadOnlyError(err) || goredis.IsClusterDownError(err) || goredis.IsLoadingError(err) ||
		goredis.IsMasterDownError(err) || goredis.IsTryAgainError(err) || goredis.IsNoReplicasError(err) {
		return true
	}
	if _, ok := goredis.IsMovedError(err); ok {
		return true
	}
	if _, ok := goredis.IsAskError(err); ok {
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
