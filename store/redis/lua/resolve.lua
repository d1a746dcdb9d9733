-- resolve.lua: the chokepoint (laws 1 and 2). Applies one transition to a
-- question only while it is open: records form items, closes it when the
-- transition says so, appends the event, enqueues an update for every
-- card and publishes the wake-up, all in one step.
--
-- KEYS[1]  question hash          KEYS[5]  open index
-- KEYS[2]  question's event ids   KEYS[6]  deadline index
-- KEYS[3]  event stream           KEYS[7]  run-open index
-- KEYS[4]  event counter          KEYS[8]  closed index (zset, ms)
--                                 KEYS[9..] outbox streams, as ARGV[3]
--
-- ARGV[1..3] shard, several-shards flag, surfaces (see common.lua)
-- ARGV[4]  question id            ARGV[9]  resolution JSON, "" for none
-- ARGV[5]  wake-up channel        ARGV[10] close event JSON, "" for none
-- ARGV[6]  now as JSON string     ARGV[11] item event JSON, "" for none
-- ARGV[7]  now ms                 ARGV[12] n items, then n pairs:
-- ARGV[8]  state when closing              item id, answer JSON
--
-- With items, the question closes only once every item ("ni" of them)
-- has an answer; until then the resolution is ignored and the item event
-- is appended instead of the close event.
--
-- Returns {C_OK, 0, fields}             applied; fields = the hash after it
--         {C_NOT_FOUND}                 no such question
--         {C_NOT_OPEN, 0, fields}       closed already; nothing changed
--         {C_ITEM_ANSWERED, 0, fields}  an item has an answer (or is given
--                                       twice); nothing changed

local q = KEYS[1]
local id = ARGV[4]
local f = redis.call('HMGET', q, 'state', 'run', 'om', 'ni', 'nm')
local state = f[1]
if not state then
  return {C_NOT_FOUND, 0, {}, {}}
end
if state ~= 'open' then
  return {C_NOT_OPEN, 0, redis.call('HGETALL', q), {}}
end

local n = tonumber(ARGV[12])
local seen = {}
for i = 0, n - 1 do
  local item = ARGV[13 + 2 * i]
  if seen[item] or redis.call('HEXISTS', q, 'a:' .. item) == 1 then
    return {C_ITEM_ANSWERED, 0, redis.call('HGETALL', q), {}}
  end
  seen[item] = true
end

local answered = 0
for i = 0, n - 1 do
  redis.call('HSET', q, 'a:' .. ARGV[13 + 2 * i], ARGV[14 + 2 * i])
end
if n > 0 then
  answered = redis.call('HINCRBY', q, 'na', n)
end

local closing = ARGV[9] ~= ''
if closing and n > 0 then
  closing = answered >= tonumber(f[4] or '0')
end

if closing then
  redis.call('HSET', q, 'state', ARGV[8], 'res', ARGV[9], 'closed', ARGV[7])
  redis.call('ZREM', KEYS[5], f[3] or '')
  redis.call('ZREM', KEYS[6], id)
  redis.call('ZREM', KEYS[7], (f[2] or '') .. '\0' .. id)
  redis.call('ZADD', KEYS[8], ARGV[7], id)
  if ARGV[10] ~= '' then
    append_event(KEYS[3], KEYS[4], KEYS[2], ARGV[10])
  end
elseif n > 0 and ARGV[11] ~= '' then
  append_event(KEYS[3], KEYS[4], KEYS[2], ARGV[11])
end

if closing or n > 0 then
  enqueue_updates(q, id, outboxes(9), ARGV[6], tonumber(f[5] or '0'))
  redis.call('PUBLISH', ARGV[5], id)
end
return {C_OK, 0, redis.call('HGETALL', q), {}}
