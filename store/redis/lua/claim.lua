-- claim.lua: hand out deliveries of one outbox stream to a consumer:
-- first those another consumer has held longer than min idle without
-- acking (it is presumed dead), then new ones, never blocking. Reading the
-- delivery count in the same step keeps Attempts honest under races.
--
-- KEYS[1]  outbox stream
-- KEYS[2]  the stream's retries waiting to fall due (zset, due ms;
--          members "<prior attempts>|<old id>|<delivery JSON>", or
--          "h|<key>" for a delayed delivery, see common.lua's hold)
-- KEYS[3]  the delayed deliveries' values (hash: key -> "<ver> <time>
--          <card>" for a card update, "d <json>" for a whole delivery)
-- KEYS[4]  this call's mark (its attempt id)
--
-- ARGV[1]  consumer group
-- ARGV[2]  consumer
-- ARGV[3]  min idle ms
-- ARGV[4]  most deliveries to hand out (> 0)
-- ARGV[5]  the store's clock in ms, "" for the server's
--
-- A run that hands out deliveries leaves a mark of its call: their ids
-- and attempts (for ten minutes, as append.lua's). go-redis sends a
-- command again when its reply was lost with the connection, and the
-- second run would find the first one's deliveries pending, not new,
-- and hand out none: they would wait out min idle and then be reclaimed
-- as an attempt that was never made. A run that finds the mark hands
-- out those of them still pending to this consumer, with the attempts
-- the first run gave them, and changes nothing.
--
-- Returns {C_OK, due, {}, list} with list = id, attempts, then the
-- entry's fields d, u, k and t ("" where absent; see outbox.go's entry),
-- repeated: reclaimed deliveries first, then new ones; due is how many ms
-- until the next retry falls due, -1 for none. Retries that fell
-- due are put back on the stream first, as new entries that remember
-- their earlier attempts (field p).

local stream, group, consumer = KEYS[1], ARGV[1], ARGV[2]
local want = tonumber(ARGV[4])
local out = {}
local got = 0

-- put appends one stream entry m, whose fields f carry a delivery, to
-- out with its attempts.
local function put(m, f, attempts)
  out[#out + 1] = m[1]
  out[#out + 1] = tostring(attempts)
  out[#out + 1] = f.d or ''
  out[#out + 1] = f.u or ''
  out[#out + 1] = f.k or ''
  out[#out + 1] = f.t or ''
end

local function fields(m)
  local f = {}
  local kv = m[2] or {}
  for i = 1, #kv, 2 do
    f[kv[i]] = kv[i + 1]
  end
  return f
end

-- next_due is how many ms until the next retry falls due, -1 for none.
local function next_due(now)
  local nxt = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if nxt[2] then
    return math.max(tonumber(nxt[2]) - now, 0)
  end
  return -1
end

local now = clock_ms(ARGV[5])
local seen = redis.call('GET', KEYS[4])
if seen then
  for id, attempts in string.gmatch(seen, '(%S+) (%S+)') do
    local p = redis.call('XPENDING', stream, group, id, id, 1, consumer)
    local m = p[1] and redis.call('XRANGE', stream, id, id)[1]
    if m then
      put(m, fields(m), attempts)
    end
  end
  return {C_OK, next_due(now), {}, out}
end

local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, want)
for _, m in ipairs(due) do
  if string.sub(m, 1, 2) == 'h|' then
    local key = string.sub(m, 3)
    local v = redis.call('HGET', KEYS[3], key)
    if v then
      if string.sub(v, 1, 2) == 'd ' then
        redis.call('XADD', stream, '*', 'd', string.sub(v, 3))
      else
        local a = string.find(v, ' ', 1, true)
        local b = string.find(v, ' ', a + 1, true)
        redis.call('XADD', stream, '*', 'u', string.sub(v, b + 1), 'k', key, 't', string.sub(v, a + 1, b - 1))
      end
      redis.call('HDEL', KEYS[3], key)
    end
  else
    local a = string.find(m, '|', 1, true)
    local b = string.find(m, '|', a + 1, true)
    redis.call('XADD', stream, '*', 'd', string.sub(m, b + 1), 'p', string.sub(m, 1, a - 1))
  end
  redis.call('ZREM', KEYS[2], m)
end

-- add appends one entry to out if it carries a delivery; attempts are
-- this stream entry's, to which a retry's earlier ones (field p) add.
local function add(m, attempts)
  local f = fields(m)
  if not (f.d or f.u) then
    return false
  end
  put(m, f, attempts + tonumber(f.p or '0'))
  return true
end

-- XAUTOCLAIM scans a bounded part of the pending list per call; a few
-- rounds reach far enough without letting one claim hold the server long.
local cursor = '0-0'
for _ = 1, 8 do
  local r = redis.call('XAUTOCLAIM', stream, group, consumer, ARGV[3], cursor, 'COUNT', want - got)
  cursor = r[1]
  for _, m in ipairs(r[2]) do
    if m[2] then
      local p = redis.call('XPENDING', stream, group, m[1], m[1], 1)
      if add(m, (p[1] and p[1][4]) or 1) then
        got = got + 1
      end
    end
  end
  if got >= want or cursor == '0-0' then
    break
  end
end

if got < want then
  local r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', want - got, 'STREAMS', stream, '>')
  if r then
    for _, m in ipairs(r[1][2]) do
      add(m, 1)
    end
  end
end
if #out > 0 then
  local mark = {}
  for i = 1, #out, 6 do
    mark[#mark + 1] = out[i] .. ' ' .. out[i + 1]
  end
  redis.call('SET', KEYS[4], table.concat(mark, ' '), 'PX', 600000)
end
return {C_OK, next_due(now), {}, out}
