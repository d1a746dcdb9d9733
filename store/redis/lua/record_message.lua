-- record_message.lua: remember a posted card so it can be edited later on
-- any replica, and append the notified event. Idempotent on the card's
-- delivery key: a repeat changes nothing (law 4). A card recorded after
-- the question changed (closed, form items answered, votes cast) gets an update
-- delivery at once: it may have been drawn from the question as it was
-- before, and must not go on showing that.
--
-- KEYS[1]  question hash          KEYS[3]  event counter
-- KEYS[2]  event stream           KEYS[4..] outbox streams, as ARGV[3]
--
-- ARGV[1..3] shard, several-shards flag, surfaces (see common.lua)
-- ARGV[4]  question id            ARGV[8]  card's update-delivery fragment
-- ARGV[5]  wake-up channel                 (JSON members without braces)
-- ARGV[6]  card's delivery key    ARGV[9]  notified event JSON, "" for none
-- ARGV[7]  card's surface         ARGV[10] card time as JSON string
--
-- Returns {C_OK, 0, fields}  recorded, or a repeat; fields = the hash
--         {C_NOT_FOUND}      no such question

local q = KEYS[1]
local id = ARGV[4]
local f = redis.call('HMGET', q, 'state', 'na', 'ev', 'nv')
local state = f[1]
if not state then
  return {C_NOT_FOUND, 0, {}, {}}
end
if redis.call('HEXISTS', q, 'md:' .. ARGV[6]) == 1 then
  return {C_OK, 0, redis.call('HGETALL', q), {}}
end

local i = redis.call('HINCRBY', q, 'nm', 1)
local set = {q, 'm:' .. i, ARGV[8], 'ms:' .. i, ARGV[7], 'md:' .. ARGV[6], i}
if ARGV[9] ~= '' then
  local _, eid = append_event(KEYS[2], KEYS[3], ARGV[9])
  set[#set + 1] = 'ev'
  set[#set + 1] = with_event(f[3], eid)
end
redis.call('HSET', unpack(set))
if state ~= 'open' or tonumber(f[2] or '0') > 0 or tonumber(f[4] or '0') > 0 then
  local ver = redis.call('HINCRBY', q, 'ver', 1)
  enqueue_update(q, id, outboxes(4), ARGV[10], ver, i)
end
redis.call('PUBLISH', ARGV[5], id)
return {C_OK, 0, redis.call('HGETALL', q), {}}
