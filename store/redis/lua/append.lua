-- append.lua: append an event that goes with no state change (refused).
-- It is recorded on its question's event list when the question exists;
-- otherwise it is a loose event, indexed by time so purge can drop it.
--
-- KEYS[1]  event stream           KEYS[4]  question's event ids
-- KEYS[2]  event counter          KEYS[5]  loose events (zset ms -> stream id)
-- KEYS[3]  question hash (a key that never exists when the event names
--          no question of this store)
--
-- ARGV[1..3] shard, several-shards flag, "" (see common.lua)
-- ARGV[4]  event JSON
-- ARGV[5]  event ms
--
-- Returns {C_OK, event n}

if redis.call('EXISTS', KEYS[3]) == 1 then
  return {C_OK, append_event(KEYS[1], KEYS[2], KEYS[4], ARGV[4]), {}, {}}
end
local n = append_event(KEYS[1], KEYS[2], nil, ARGV[4])
redis.call('ZADD', KEYS[5], ARGV[5], string.format('%.0f', n) .. '-' .. ARGV[1])
return {C_OK, n, {}, {}}
