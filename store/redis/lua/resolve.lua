-- resolve.lua: the chokepoint's write (laws 1, 2 and 10). Core computed
-- the change (core.Next); this script only checks that the question is
-- still at the version the change was computed from and then writes it,
-- all in one step: the changed fields in one HSET, the resolution, the
-- events, the card updates and the wake-up. It holds no rule of the close.
-- The indexes are left as they are: the deadline, run-open and open
-- indexes' readers (Due, EndRun, ListOpen, OpenPage) skip and drop
-- members whose question is no longer open, and Purge drops the rest;
-- the closed index is caught up by its readers (closed_catchup.lua) from
-- the close's mark on its first event (common.lua's append_event). So a
-- close pays for none of them. The resolution goes to a key of its own,
-- written once, so nothing is read to write it.
--
-- KEYS[1]  question hash          KEYS[4]  closed index (zset, ms)
-- KEYS[2]  event stream           KEYS[5]  question document
-- KEYS[3]  event counter          KEYS[6]  its resolution
--                                 KEYS[7..] the outbox streams the
--                                          change enqueues on, and no other
-- With delayed updates (core.Delivery.Delay), KEYS ends with a zset of
-- retries and held hash per delayed update, of its surface (after the
-- outbox streams): the update waits there (common.lua's hold) instead of
-- going on the stream.
--
-- ARGV[1..2] shard, clock flag (see common.lua); ARGV[3] unused
-- ARGV[4]  question id            ARGV[9]  the attempt: an id unique to
-- ARGV[5]  wake-up channel, or ""          this call of Commit
--          (see below)
-- ARGV[6]  now as JSON string     ARGV[10] "1" if the change closes the
-- ARGV[7]  now ms                          question, else ""
-- ARGV[8]  the version the change ARGV[11] the resolution JSON when it
--          was computed from               closes
-- ARGV[12] nf, then nf pairs: hash field, value (what changed, and
--          on a close its closed time)
-- then     ne, then ne events, each three arguments (common.lua's
--          append_event: digest, witness, body)
-- then     nd, then nd triples: the outbox (its number among KEYS[7..]),
--          card (card.go), delivery key; or, for a delivery that is no
--          card update (a close's webhook), the outbox, the delivery's
--          JSON and "" (it goes on the stream as Enqueue puts it)
-- then, with delayed updates (none of them among the nd): the store's
--          clock in ms ("" for the server's), then for each a quadruple:
--          the number among KEYS of its surface's zset of retries (its
--          held hash follows), the value to hold (common.lua's hold), its
--          delivery key and its delay in ms
--
-- The wake-up is published on ARGV[5] last. With durability on the store
-- sends "" and publishes it itself once the replicas hold the change
-- (durable.go): a waiter woken now could read a change that a failover
-- may yet lose.
--
-- Every change adds its attempt to "at", marked with a "!" if it closed
-- the question. A run that finds its own attempt there is the same call
-- sent again (go-redis sends a command again when its reply was lost with
-- the connection, and an autopipelined batch goes again whole): the first
-- run applied it, so this one changes nothing. Rather than call it stale,
-- it answers as applied, with the hash; or, if the first run left the
-- question open and another closed it since, with C_APPLIED, so that the
-- caller is not told it closed it.
--
-- Returns {C_OK, 1}              written: the question is the change's
--         {C_OK, 0, fields}      applied by this call's first run; fields =
--                                the hash as it now stands
--         {C_NOT_FOUND}          no such question
--         {C_STALE, 0, fields}   the question is at another version (or
--                                closed); nothing changed
--         {C_APPLIED, 0, fields} applied by this call's first run, and
--                                closed by another since; nothing changed

local q = KEYS[1]
local id = ARGV[4]
local f = redis.call('HMGET', q, 'state', 'ver', 'at', 'ev')
if not f[1] then
  return {C_NOT_FOUND, 0, {}, {}}
end
local attempt = ARGV[9]
if f[3] then
  local at = ' ' .. f[3] .. ' '
  if string.find(at, ' ' .. attempt .. '! ', 1, true) or
     (f[1] == 'open' and string.find(at, ' ' .. attempt .. ' ', 1, true)) then
    return {C_OK, 0, record(q, KEYS[5], KEYS[6]), {}}
  elseif string.find(at, ' ' .. attempt .. ' ', 1, true) then
    return {C_APPLIED, 0, record(q, KEYS[5], KEYS[6]), {}}
  end
end
if f[1] ~= 'open' or (f[2] or '0') ~= ARGV[8] then
  return {C_STALE, 0, record(q, KEYS[5], KEYS[6]), {}}
end

local nf = tonumber(ARGV[12])
local i = 13 + 2 * nf
local ne = tonumber(ARGV[i])
-- Every event is checked before the first write: a call refused here
-- changes nothing (see common.lua's check_event).
for j = i + 1, i + 3 * ne, 3 do
  check_event(ARGV[j], ARGV[j + 1])
end

local ver = tonumber(ARGV[8]) + 1
local closing = ARGV[10] == '1'
local mine = attempt
local closed -- the close's mark, on its first event
if closing then
  mine = attempt .. '!'
  closed = ARGV[7] .. ' ' .. id
  redis.call('SET', KEYS[6], ARGV[11])
end
local ev = f[4]
for j = i + 1, i + 3 * ne, 3 do
  local _, eid = append_event(KEYS[2], KEYS[3], ARGV[j], ARGV[j + 1], ARGV[j + 2], nil, closed)
  closed = nil
  ev = with_event(ev, eid)
end
if closed then -- a close with no event to carry its mark
  redis.call('ZADD', KEYS[4], ARGV[7], id)
end
i = i + 3 * ne + 1
-- The fields Go sent go last, straight from ARGV.
local at = f[3] and f[3] .. ' ' .. mine or mine
if ev then
  redis.call('HSET', q, 'ver', ver, 'at', at, 'ev', ev, unpack(ARGV, 13, 12 + 2 * nf))
else
  redis.call('HSET', q, 'ver', ver, 'at', at, unpack(ARGV, 13, 12 + 2 * nf))
end

local nd = tonumber(ARGV[i])
for j = i + 1, i + 3 * nd, 3 do
  if ARGV[j + 2] == '' then
    redis.call('XADD', KEYS[6 + tonumber(ARGV[j])], '*', 'd', ARGV[j + 1])
  else
    redis.call('XADD', KEYS[6 + tonumber(ARGV[j])], '*', 'u', ARGV[j + 1], 'k', ARGV[j + 2], 't', ARGV[6])
  end
end
i = i + 3 * nd + 1
if ARGV[i] then
  local now = clock_ms(ARGV[i])
  for j = i + 1, #ARGV, 4 do
    local k = tonumber(ARGV[j])
    hold(KEYS[k], KEYS[k + 1], ARGV[j + 2], now + tonumber(ARGV[j + 3]), ARGV[j + 1])
  end
end
if ARGV[5] ~= '' then
  redis.call('PUBLISH', ARGV[5], id)
end
return {C_OK, 1, {}, {}}
