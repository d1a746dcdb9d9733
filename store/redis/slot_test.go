package redis

import (
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// slot computes a key's Redis Cluster hash slot: CRC16 (XMODEM) of the
// hash tag, or of the whole key when it has none, modulo 16384.
func slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

func TestSlotKnownValues(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	for key, want := range map[string]int{
		"foo":            12182,
		"bar":            5061,
		"123456789":      12739,
		"{user1000}.foo": slot("user1000"),
		"foo{}{bar}":     slot("foo{}{bar}"),
		"{foo}{bar}":     slot("foo"),
	} {
		if got := slot(key); got != want {
			t.Errorf("slot(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestKeysOfAShardShareASlot checks every key builder: all keys of one
// shard, for any question in it, hash to one slot, so any script over
// them runs on a cluster.
func TestKeysOfAShardShareASlot(t *testing.T) {
	k := keys{prefix: "ab"}
	slots := map[int]int{}
	for shard := range core.MaxShards {
		id := core.NewID(shard)
		all := []string{
			k.question(id), k.document(id), k.questionEvents(id),
			k.events(shard), k.seq(shard), k.open(shard), k.created(shard), k.closed(shard),
			k.deadline(shard), k.runOpen(shard), k.runs(shard), k.loose(shard), k.wake(shard),
			k.appended(shard, "a1"), k.purged(shard, "a1"),
		}
		all = append(all, k.outboxes(shard)...)
		for _, idx := range []core.TimeIndex{core.ByCreated, core.ByClosed} {
			key, ok := k.index(shard, idx)
			if !ok {
				t.Fatalf("no key for index %q", idx)
			}
			all = append(all, key)
		}
		if shard == 0 {
			all = append(all, k.beat(), k.shardCount())
		}
		want := slot(all[0])
		for _, key := range all {
			if got := slot(key); got != want {
				t.Errorf("shard %d: key %q is in slot %d, %q in %d", shard, key, got, all[0], want)
			}
			if !strings.HasPrefix(key, k.tag(shard)) {
				t.Errorf("shard %d: key %q does not start with its tag %q", shard, key, k.tag(shard))
			}
		}
		slots[want]++
	}
	// Not required for correctness, but shards are only worth having if
	// they spread over the cluster.
	if len(slots) < core.MaxShards/2 {
		t.Errorf("%d shards use only %d slots", core.MaxShards, len(slots))
	}
}
