-- record_message.lua: remember a posted card so it can be edited later on
-- any replica, and append the notified event. Idempotent on the card's
-- delivery key: a repeat changes nothing (law 4). A recorded card moves
-- the question's version on, as every change does. A card recorded after
-- the question changed (closed, form items answered, votes cast) gets an update
-- delivery at once: it may have been drawn from the question as it was
-- before, and must not go on showing that.
--
-- KEYS[1]  question hash          KEYS[3]  event counter
-- KEYS[2]  event stream           KEYS[4..] outbox streams, as ARGV[3]
--
-- ARGV[1..3] shard, clock flag, surfaces (see common.lua)
-- ARGV[4]  question id            ARGV[8]  the card as stored (card.go)
-- ARGV[5]  wake-up channel, ""    ARGV[9..11] notified event (common.lua's
--          for none (durability            append_event: digest, witness,
--          on: the store publishes         body), body "" for none
--          after the wait)        ARGV[12] card time as JSON string
-- ARGV[6]  card's delivery key, "" for none (then never a repeat)
-- ARGV[7]  card's surface
--
-- Returns {C_OK}         recorded, or a repeat (no fields: its one caller,
--                        the delivery loop, has no use for the question,
--                        and reading it back cost a quarter of the script)
--         {C_NOT_FOUND}  no such question

local q = KEYS[1]
local id = ARGV[4]
local key = ARGV[6]
local f = redis.call('HMGET', q, 'state', 'na', 'ev', 'nv', 'nm')
local state = f[1]
if not state then
  return {C_NOT_FOUND, 0, {}, {}}
end
-- A repeat: a card with this key is recorded, as its mk:<n> field or, on
-- records written before that, as an md:<key> field. A card without a
-- key is never a repeat (nor is one of an earlier card without a key).
local nm = tonumber(f[5] or '0')
local repeated = key ~= '' and redis.call('HEXISTS', q, 'md:' .. key) == 1
if nm > 0 and key ~= '' and not repeated then
  local fields = {}
  for i = 1, nm do
    fields[i] = 'mk:' .. i
  end
  for _, k in ipairs(redis.call('HMGET', q, unpack(fields))) do
    if k == key then
      repeated = true
    end
  end
end
if repeated then
  return {C_OK, 0, {}, {}}
end

local i = nm + 1
local set = {q, 'nm', i, 'm:' .. i, ARGV[8], 'ms:' .. i, ARGV[7], 'mk:' .. i, key}
if ARGV[11] ~= '' then
  local _, eid = append_event(KEYS[2], KEYS[3], ARGV[9], ARGV[10], ARGV[11])
  set[#set + 1] = 'ev'
  set[#set + 1] = with_event(f[3], eid)
end
redis.call('HSET', unpack(set))
-- A recorded card is a change: a change computed before it goes stale.
local ver = redis.call('HINCRBY', q, 'ver', 1)
if state ~= 'open' or tonumber(f[2] or '0') > 0 or tonumber(f[4] or '0') > 0 then
  enqueue_update(q, id, outboxes(4), ARGV[12], ver, i)
end
if ARGV[5] ~= '' then
  redis.call('PUBLISH', ARGV[5], id)
end
return {C_OK, 0, {}, {}}
