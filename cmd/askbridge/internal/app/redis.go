package app

import (
	"context"
	"crypto/x509"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/core"
	redisstore "github.com/askbridge/askbridge/store/redis"
)

// redisDial reads the Redis settings: which of REDIS_URL,
// REDIS_SENTINEL_URL and REDIS_CLUSTER_URL is set (at most one), that its
// URL parses as go-redis reads that topology, and the CA file. It returns
// the variable that is set, or "" when none is (the embedded store). Every error names the
// variable at fault; none quotes a URL, which may hold a password.
func (s *Settings) redisDial() (redisstore.Dial, string, error) {
	var d redisstore.Dial
	var name string
	set := 0
	for _, v := range []struct {
		name string
		url  Secret
		t    redisstore.Topology
	}{
		{"REDIS_URL", s.RedisURL, redisstore.Single},
		{"REDIS_SENTINEL_URL", s.RedisSentinelURL, redisstore.Sentinel},
		{"REDIS_CLUSTER_URL", s.RedisClusterURL, redisstore.Cluster},
	} {
		if v.url == "" {
			continue
		}
		set++
		if set > 1 {
			return d, "", fmt.Errorf("%s and %s: set one of REDIS_URL, REDIS_SENTINEL_URL and REDIS_CLUSTER_URL, not several", name, v.name)
		}
		name, d = v.name, redisstore.Dial{Topology: v.t, URL: v.url.Reveal()}
	}
	if err := s.readDurability(); err != nil {
		return d, "", err
	}
	if set == 0 {
		if s.durability.Replicas > 0 {
			return d, "", fmt.Errorf("ASKBRIDGE_REDIS_DURABILITY: set, but no Redis is (REDIS_URL, REDIS_SENTINEL_URL or REDIS_CLUSTER_URL)")
		}
		if s.RedisCAFile != "" {
			return d, "", fmt.Errorf("REDIS_TLS_CA_FILE: set, but no Redis is (REDIS_URL, REDIS_SENTINEL_URL or REDIS_CLUSTER_URL)")
		}
		return d, "", nil
	}
	if s.RedisCAFile != "" {
		pem, err := os.ReadFile(s.RedisCAFile)
		if err != nil {
			return d, "", fmt.Errorf("REDIS_TLS_CA_FILE: %w", err)
		}
		d.RootCAs = x509.NewCertPool()
		if !d.RootCAs.AppendCertsFromPEM(pem) {
			return d, "", fmt.Errorf("REDIS_TLS_CA_FILE: %s holds no PEM certificate", s.RedisCAFile)
		}
	}
	// Parsing builds a client but dials nothing; it is closed at once.
	c, err := d.Client()
	if err != nil {
		if s.RedisCAFile != "" && d.RootCAs != nil {
			return d, "", fmt.Errorf("%s (with REDIS_TLS_CA_FILE): %w", name, err)
		}
		return d, "", fmt.Errorf("%s: %w", name, err)
	}
	_ = c.Close()
	return d, name, nil
}

// logSpread says, on a cluster, how the shards spread over the primaries,
// and warns when they are uneven: the busiest primary then carries more
// than its part (README, "Choosing shards").
func logSpread(ctx context.Context, st *redisstore.Store, log zerolog.Logger) {
	if st.Topology() != redisstore.Cluster {
		return
	}
	spread, err := st.Spread(ctx)
	if err != nil {
		log.Warn().Err(err).Msg("could not read how the shards spread over the cluster's primaries")
		return
	}
	counts := zerolog.Dict()
	lo, hi := -1, 0
	for _, addr := range slices.Sorted(maps.Keys(spread)) { // one order in every start's line
		shards := spread[addr]
		counts.Int(addr, len(shards))
		hi = max(hi, len(shards))
		if lo < 0 || len(shards) < lo {
			lo = len(shards)
		}
	}
	ev := log.Info()
	if hi > lo+1 {
		ev = log.Warn()
	}
	ev.Dict("shards_per_primary", counts).Msg("shards over the cluster's primaries (primaries with none are not listed; move shard slots to even them out, see the README)")
}

// readDurability reads ASKBRIDGE_REDIS_DURABILITY (a number of replicas,
// 0 for off) and ASKBRIDGE_REDIS_DURABILITY_TIMEOUT into s.durability.
// Settings built by hand (tests) leave the strings empty: off, 1 s.
func (s *Settings) readDurability() error {
	d := redisstore.Durability{Timeout: time.Second}
	if v := s.RedisDurability; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("ASKBRIDGE_REDIS_DURABILITY: %q; it is the number of replicas that must hold each transition, 0 for off", v)
		}
		d.Replicas = n
	}
	if v := s.RedisDurabilityTimeout; v != "" {
		t, err := core.ParseDuration(v)
		if err != nil || t < time.Millisecond || t > redisstore.MaxDurabilityTimeout {
			return fmt.Errorf("ASKBRIDGE_REDIS_DURABILITY_TIMEOUT: %q; a duration between 1ms and %s", v, redisstore.MaxDurabilityTimeout)
		}
		d.Timeout = t
	}
	s.durability = d
	return nil
}

// redisLog sends go-redis's own messages (a dial that failed, the primary
// a Sentinel named) to the program's log at debug level, instead of raw
// lines on stderr that would break a JSON log: what matters of a failover
// is logged by askbridge itself (each 503, /readyz).
type redisLog struct{ log zerolog.Logger }

func (l redisLog) Printf(_ context.Context, format string, v ...any) {
	l.log.Debug().Str("component", "go-redis").Msgf(format, v...)
}
