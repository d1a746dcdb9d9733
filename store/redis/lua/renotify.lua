-- renotify.lua: re-post a still-open question and move its deadline (a
-- reminder, an escalation, a re-ask), optionally only while the deadline
-- is still the one the caller saw, so racing replicas act once.
--
-- KEYS[1]  question hash          KEYS[3]  event counter
-- KEYS[2]  event stream           KEYS[4]  deadline index
-- KEYS[5]  question document      KEYS[6]  its resolution
--                                 KEYS[7..] outbox streams, as ARGV[3]
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
-- then, after the pairs: ARGV[13 + 2n] the attempt, an id unique to this
--          call of Renotify
--
-- The last three renotices' attempts are kept in "rat" (three, so that
-- one from another replica landing in between does not hide the first
-- run; they still fit a compact hash's value). A run that finds its own
-- there is the same call sent again (go-redis sends a command again when
-- its reply was lost with the connection): the first run applied it, so
-- this one changes nothing and answers as applied, rather than post the
-- question again or say the deadline moved (it moved it).
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
local boxes = outboxes(7)
local nd = tonumber(ARGV[12])
for i = 0, nd - 1 do
  if not boxes[ARGV[13 + 2 * i]] then
    return redis.error_reply('askbridge: no outbox for surface ' .. ARGV[13 + 2 * i])
  end
end
if ARGV[11] ~= '' then
  check_event(ARGV[9], ARGV[10])
end
local attempt = ARGV[13 + 2 * nd]
local f = redis.call('HMGET', q, 'state', 'deadline', 'ev', 'rat')
local state = f[1]
if not state then
  return {C_NOT_FOUND, 0, {}, {}}
end
if f[4] and string.find(' ' .. f[4] .. ' ', ' ' .. attempt .. ' ', 1, true) then
  return {C_OK, 0, {}, {}}
end
if state ~= 'open' then
  return {C_NOT_OPEN, 0, record(q, KEYS[5], KEYS[6]), {}}
end
if ARGV[6] ~= '' and f[2] ~= ARGV[6] then
  return {C_DEADLINE_MOVED, 0, {}, {}}
end

local kept = {}
for a in string.gmatch(f[4] or '', '%S+') do
  kept[#kept + 1] = a
end
kept[#kept + 1] = attempt
local set = {q, 'rat', table.concat(kept, ' ', math.max(1, #kept - 2))}
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
redis.call('HSET', unpack(set))
if ARGV[8] == '1' then
  redis.call('HINCRBY', q, 'renot', 1)
end
-- A renotice is a change: a change computed before it goes stale.
redis.call('HINCRBY', q, 'ver', 1)
for i = 0, nd - 1 do
  redis.call('XADD', boxes[ARGV[13 + 2 * i]], '*', 'd', ARGV[14 + 2 * i])
end
if ARGV[5] ~= '' then
  redis.call('PUBLISH', ARGV[5], id)
end
return {C_OK, 0, {}, {}}
