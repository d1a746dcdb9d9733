package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"

	"github.com/askbridge/askbridge/core"
)

// Spread reports which primary serves each shard now: primary address to
// its shards, in order. On one server or Sentinel every shard is on the
// one primary, named "". A shard is one hash slot, so shards spread over
// a cluster's primaries as their slots hash, not evenly: an operator who
// wants them even moves those slots (redis-cli --cluster reshard, or
// CLUSTER SETSLOT), each move carrying one shard's keys only.
func (s *Store) Spread(ctx context.Context) (map[string][]int, error) {
	out := map[string][]int{}
	cc, ok := s.base().(*goredis.ClusterClient)
	if !ok {
		for shard := range s.shards {
			out[""] = append(out[""], shard)
		}
		return out, nil
	}
	for shard := range s.shards {
		n, err := cc.MasterForKey(ctx, s.k.tag(shard))
		if err != nil {
			return nil, core.Internal("redis spread", err)
		}
		addr := n.Options().Addr
		out[addr] = append(out[addr], shard)
	}
	return out, nil
}
