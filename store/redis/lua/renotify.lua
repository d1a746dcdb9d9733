-- renotify.lua: re-post a still-open question and move its deadline (a
-- reminder, an escalation, a re-ask), optionally only while the deadline
-- is still the one the caller saw, so racing replicas act once.
--
-- KEYS[1]  question hash          KEYS[3]  event counter
-- KEYS[2]  event stream           KEYS[4]  deadline index
-- KEYS[5]  question document      KEYS[6]  its resolution
-- KEYS[7]  this call's mark (its attempt id)
--                                 KEYS[8..] outbox streams, as ARGV[3]
--
-- ARGV[1..3] shard, clock flag, surfaces (see common.lua)
-- ARGV[4]  question id            ARGV[8]  "1" to count a renotice
-- ARGV[5]  wake-up channel, ""    ARGV[9..11] the event (common.lua's
--          for none (durability            append_event: digest, witness,
--          on: the store publishes         body), body "" for none
--          after the wait)
-- ARGV[6]  expected deadline ms,
--          "" for unconditional
-- ARGV[7]  new deadline ms, "" to ARGV[12] n deliveries, then n pairs:
--          keep it                         surface, delivery JSON
--
-- A run that applies leaves a mark of its call (for ten minutes, as
-- append.lua's, far longer than any resend takes). A run that finds it
-- is the same call sent again (go-redis sends a command again when its
-- reply was lost with the connection): the first run applied it, so
-- this one changes nothing and answers as applied, rather than post the
-- question again or say the deadline moved (it moved it), however many
-- other renotices landed in between. (Earlier versions kept the last
-- three attempts in the hash's "rat" field, which three renotices in
-- between pushed the first run out of.)
--
-- Returns {C_OK}                  applied (by this run or, sent again, by
--                                 the first); no fields, as its callers
--                                 read none (core.Store.Renotify)
--         {C_NOT_FOUND}           no such question
--         {C_NOT_OPEN, 0, fields} closed; nothing changed; fields = the
--                                 hash, which names the closer in the error
--         {C_DEADLINE_MOVED}      deadline differs; nothing changed
-- An unknown surface, or an event without its audit digest, is a script
-- error, raised before any write.

local q = KEYS[1]
local id = ARGV[4]
local boxes = outboxes(8)
local nd = tonumber(ARGV[12])
for i = 0, nd - 1 do
  if not boxes[ARGV[13 + 2 * i]] then
    return redis.error_reply('askbridge: no outbox for surface ' .. ARGV[13 + 2 * i])
  end
end
if ARGV[11] ~= '' then
  check_event(ARGV[9], ARGV[10])
end
if redis.call('EXISTS', KEYS[7]) == 1 then
  return {C_OK, 0, {}, {}}
end
local f = redis.call('HMGET', q, 'state', 'deadline', 'ev')
local state = f[1]
if not state then
  return {C_NOT_FOUND, 0, {}, {}}
end
if state ~= 'open' then
  return {C_NOT_OPEN, 0, record(q, KEYS[5], KEYS[6]), {}}
end
if ARGV[6] ~= '' and f[2] ~= ARGV[6] then
  return {C_DEADLINE_MOVED, 0, {}, {}}
end

local set = {q}
if ARGV[7] ~= '' then
  set[#set + 1] = 'deadline'
  set[#set + 1] = ARGV[7]
  redis.call('ZADD', KEYS[4], ARGV[7], id)
end
if ARGV[11] ~= '' then
  local _, eid = append_event(KEYS[2], KEYS[3], ARGV[9], ARGV[10], ARGV[11])
  set[#set + 1] = 'ev'
  set[#set + 1] = with_event(f[3], eid)
end
if #set > 1 then
  redis.call('HSET', unpack(set))
end
if ARGV[8] == '1' then
  redis.call('HINCRBY', q, 'renot', 1)
end
-- A renotice is a change: a change computed before it goes stale.
redis.call('HINCRBY', q, 'ver', 1)
for i = 0, nd - 1 do
  redis.call('XADD', boxes[ARGV[13 + 2 * i]], '*', 'd', ARGV[14 + 2 * i])
end
redis.call('SET', KEYS[7], '1', 'PX', 600000)
if ARGV[5] ~= '' then
  redis.call('PUBLISH', ARGV[5], id)
end
return {C_OK, 0, {}, {}}
