package redis

import (
	"context"
	"fmt"

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
	// Asked of the cluster, not read from the client's cached map, so a
	// slot just moved is seen where it is now.
	const op = "redis spread"
	ranges, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, core.Internal(op, err)
	}
	for shard := range s.shards {
		slot, err := cc.ClusterKeySlot(ctx, s.k.tag(shard)).Result()
		if err != nil {
			return nil, core.Internal(op, err)
		}
		addr := ""
		for _, r := range ranges {
			if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
				addr = r.Nodes[0].Addr
			}
		}
		if addr == "" {
			return nil, core.Internal(op, fmt.Errorf("no node serves slot %d (shard %d)", slot, shard))
		}
		out[addr] = append(out[addr], shard)
	}
	return out, nil
}
