package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
)

// TestFailoverErrorsAreUnavailable makes the errors a failover produces
// on real servers, and some that are not a failover's, and checks which
// Unavailable tells apart, as they come from go-redis and wrapped as the
// Store and core wrap them.
func TestFailoverErrorsAreUnavailable(t *testing.T) {
	ctx := t.Context()
	primary, replica := redistest.Start(t), redistest.Start(t)
	host, port, _ := strings.Cut(primary.Addr(), ":")
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	client := func(addr string) *goredis.Client {
		c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1})
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
		wrapped := core.Internal("redis answer", fmt.Errorf("script resolve: %w", tt.err))
		for _, err := range []error{tt.err, wrapped} {
			if got := Unavailable(err); got != tt.want {
				t.Errorf("%s: Unavailable(%v) = %v, want %v", tt.name, err, got, tt.want)
			}
		}
	}
	// What the Store marks itself matches core's sentinel too.
	marked := markErr(errors.New("ROLE says slave"))
	if !core.Unavailable(marked) || !Unavailable(marked) || marked.Error() != "ROLE says slave" {
		t.Errorf("a marked error: %v", marked)
	}
}

// TestUnavailableNil: no error is not a failover's, and asking must not
// panic (a caller may classify whatever it got back).
func TestUnavailableNil(t *testing.T) {
	if Unavailable(nil) {
		t.Error("Unavailable(nil) = true, want false")
	}
}
