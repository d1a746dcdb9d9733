-- append.lua: append an event that goes with no state change (refused).
-- It is recorded on its question's event list (the "ev" field) when the
-- question exists;
-- otherwise it is a loose event, indexed by time so purge can drop it.
-- The event list is the log's index, not the question's state: nothing a
-- change is computed from moves, so the question's version stays (a
-- refusal recorded during a race does not make the winner's change
-- stale), and resolve.lua extends the list as it stands when it writes.
--
-- KEYS[1]  event stream           KEYS[4]  loose events (zset ms -> stream id)
-- KEYS[2]  event counter          KEYS[5]  this call's mark (its attempt id)
-- KEYS[3]  question hash (a key that never exists when the event names
--          no question of this store)
--
-- ARGV[1..3] shard, clock flag, "" (see common.lua)
-- ARGV[4..6] the event (common.lua's append_event: digest, witness, body)
-- ARGV[7]  event ms
--
-- A call go-redis sends again after its reply was lost finds the mark
-- its first run left (for ten minutes, far longer than any resend
-- takes) and appends nothing: the event is in the log once.
--
-- Returns {C_OK, event n}

local seen = redis.call('GET', KEYS[5])
if seen then
  return {C_OK, tonumber(seen), {}, {}}
end
local state = redis.call('HMGET', KEYS[3], 'state', 'ev')
local n, eid = append_event(KEYS[1], KEYS[2], ARGV[4], ARGV[5], ARGV[6])
if state[1] then
  redis.call('HSET', KEYS[3], 'ev', with_event(state[2], eid))
else
  redis.call('ZADD', KEYS[4], ARGV[7], eid)
end
redis.call('SET', KEYS[5], string.format('%.0f', n), 'PX', 600000)
return {C_OK, n, {}, {}}
