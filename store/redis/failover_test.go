package redis

import (
	"context"
	"errors"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
)

// TestFailoverErrorsAreMarked makes the errors a failover produces on
// real servers, and some that are not a failover's, and checks which the
// hook marks core.ErrUnavailable.
func TestFailoverErrorsAreMarked(t *testing.T) {
	ctx := t.Context()
	primary, replica := redistest.Start(t), redistest.Start(t)
	host, port, _ := strings.Cut(primary.Addr(), ":")
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	client := func(addr string) *goredis.Client {
		c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1})
		c.AddHook(failoverHook{})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	onReplica, onPrimary := client(replica.Addr()), client(primary.Addr())
	gone := redistest.Start(t)
	onGone := client(gone.Addr())
	if err := onGone.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	gone.Close()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a write on a replica (READONLY)", onReplica.Set(ctx, "k", "v", 0).Err(), true},
		{"a script's write on a replica", onReplica.Eval(ctx, "return redis.call('SET', KEYS[1], 'v')", []string{"k"}).Err(), true},
		{"a server that died (connection cut, then refused)", onGone.Ping(ctx).Err(), true},
		{"a server that stays dead (refused)", onGone.Ping(ctx).Err(), true},
		{"a script's own error", onPrimary.Eval(ctx, "return redis.error_reply('NOPE not a failover')", nil).Err(), false},
		{"a wrong type", func() error {
			onPrimary.Set(ctx, "str", "v", 0)
			return onPrimary.LPush(ctx, "str", "x").Err()
		}(), false},
		{"the caller's cancel", onPrimary.Ping(cancelled).Err(), false},
		{"no such key", onPrimary.Get(ctx, "missing").Err(), false},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		if got := core.Unavailable(tt.err); got != tt.want {
			t.Errorf("%s: %v marked unavailable %v, want %v", tt.name, tt.err, got, tt.want)
		}
		// Marked or not, the cause is still what go-redis's own checks see.
		if tt.want && strings.Contains(tt.name, "READONLY") && !goredis.IsReadOnlyError(tt.err) {
			t.Errorf("%s: the mark hides READONLY from go-redis: %v", tt.name, tt.err)
		}
	}
	if errors.Is(onPrimary.Get(ctx, "missing").Err(), goredis.Nil) != true {
		t.Error("the hook changed goredis.Nil")
	}
}
