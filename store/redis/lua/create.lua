-- create.lua: store a new open question, its asked event and its
-- deliveries, in one step (law 3).
--
-- KEYS[1]  question hash          KEYS[5]  created index (zset, ms)
-- KEYS[2]  event stream           KEYS[6]  deadline index (zset, ms)
-- KEYS[3]  event counter          KEYS[7]  run-open index (zset, lex "<run>\0<id>")
-- KEYS[4]  open index (zset, lex) KEYS[8]  ended runs (hash run -> ms)
--                                 KEYS[9]  idempotency keys (hash key -> id)
--                                 KEYS[10] question document (string)
--                                 KEYS[11..] outbox streams, as ARGV[3]
--
-- ARGV[1..3] shard, clock flag, surfaces (see common.lua)
-- ARGV[4]  question id            ARGV[9]  deadline ms, "" for none
-- ARGV[5]  run id                 ARGV[10] renotified count
-- ARGV[6]  question document JSON ARGV[11..13] asked event (common.lua's
-- ARGV[7]  open index member               append_event: digest, witness, body)
-- ARGV[8]  created ms             ARGV[14] idempotency key, "" for none
--                                 ARGV[15] n deliveries, then n pairs:
--                                          surface, delivery JSON
--
-- Returns {C_OK, event n}         created
--         {C_OK, 0}               created already by this very call, sent
--                                 again: go-redis sends a command again
--                                 when its reply was lost with the
--                                 connection. The id is new to each
--                                 call, so the question stored under it
--                                 with this document is this call's;
--                                 nothing changed
--         {C_EXISTS}              the id is taken; nothing changed
--         {C_DUPLICATE, 0, {}, {id}} the idempotency key is taken, by
--                                 the question id;
--                                 nothing changed (checked before the run,
--                                 so a retry after the run ended still
--                                 finds its question)
--         {C_RUN_ENDED}           the run has ended; nothing changed
-- An unknown surface is a script error, raised before any write.

local id = ARGV[4]
local run = ARGV[5]
local idem = ARGV[14]
local boxes = outboxes(11)
local nd = tonumber(ARGV[15])
for i = 0, nd - 1 do
  if not boxes[ARGV[16 + 2 * i]] then
    return redis.error_reply('askbridge: no outbox for surface ' .. ARGV[16 + 2 * i])
  end
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  -- the document never changes once written (a close's resolution has
  -- a key of its own)
  if redis.call('GET', KEYS[10]) == ARGV[6] then
    return {C_OK, 0, {}, {}}
  end
  return {C_EXISTS, 0, {}, {}}
end
if idem ~= '' then
  local first = redis.call('HGET', KEYS[9], idem)
  if first then
    return {C_DUPLICATE, 0, {}, {first}}
  end
end
if redis.call('HEXISTS', KEYS[8], run) == 1 then
  return {C_RUN_ENDED, 0, {}, {}}
end

-- Counters that are zero are left out: readers take a missing one as 0.
local n, eid = append_event(KEYS[2], KEYS[3], ARGV[11], ARGV[12], ARGV[13])
-- The document has a key of its own, so that every field of the hash is
-- short (record.go); om is the open index member less the ":<id>" that
-- ends it.
redis.call('SET', KEYS[10], ARGV[6])
local om = string.sub(ARGV[7], 1, #ARGV[7] - #id - 1)
local set = {KEYS[1], 'state', 'open', 'run', run, 'om', om, 'ev', eid}
if ARGV[10] ~= '0' then
  set[#set + 1] = 'renot'
  set[#set + 1] = ARGV[10]
end
if idem ~= '' then
  set[#set + 1] = 'idem'
  set[#set + 1] = idem
  redis.call('HSET', KEYS[9], idem, id)
end
if ARGV[9] ~= '' then
  set[#set + 1] = 'deadline'
  set[#set + 1] = ARGV[9]
  redis.call('ZADD', KEYS[6], ARGV[9], id)
end
redis.call('HSET', unpack(set))
redis.call('ZADD', KEYS[4], 0, ARGV[7])
redis.call('ZADD', KEYS[5], ARGV[8], id)
redis.call('ZADD', KEYS[7], 0, run .. '\0' .. id)
for i = 0, nd - 1 do
  redis.call('XADD', boxes[ARGV[16 + 2 * i]], '*', 'd', ARGV[17 + 2 * i])
end
return {C_OK, n, {}, {}}
