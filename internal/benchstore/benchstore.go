// Package benchstore runs a benchmark on each store askbridge ships, set
// up as a user runs it: the embedded store in a temporary directory with
// fsync on, and Redis on a private redis-server (internal/redistest).
package benchstore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/redistest"
	"github.com/askbridge/askbridge/store/bolt"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// Env is one store a benchmark runs on, and the redis-server behind it
// (nil for the embedded store), whose CPU a benchmark may report.
type Env struct {
	Store core.Store
	Redis *redistest.Server
}

// Each runs run as the sub-benchmarks "bolt" and "redis", each on a fresh
// store that is closed when it returns.
func Each(b *testing.B, run func(b *testing.B, st core.Store)) {
	EachEnv(b, func(b *testing.B, e Env) { run(b, e.Store) })
}

// EachEnv is Each for benchmarks that also want the redis-server.
func EachEnv(b *testing.B, run func(b *testing.B, e Env)) {
	b.Run("bolt", func(b *testing.B) {
		st, err := bolt.Open(filepath.Join(b.TempDir(), "askbridge.db"), bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		run(b, Env{Store: st})
	})
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Start(b)
		st, err := redisstore.Open(context.Background(), srv.URL(), redisstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		run(b, Env{Store: st, Redis: srv})
	})
}
