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
--
-- ARGV[1]  consumer group
-- ARGV[2]  consumer
-- ARGV[3]  min idle ms
-- ARGV[4]  most deliveries to hand out (> 0)
-- ARGV[5]  the store's clock in ms, "" for the server's
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

local now = clock_ms(ARGV[5])
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
  local f = {}
  local fields = m[2] or {}
  for i = 1, #fields, 2 do
    f[fields[i]] = fields[i + 1]
  end
  if not (f.d or f.u) then
    return false
  end
  out[#out + 1] = m[1]
  out[#out + 1] = tostring(attempts + tonumber(f.p or '0'))
  out[#out + 1] = f.d or ''
  out[#out + 1] = f.u or ''
  out[#out + 1] = f.k or ''
  out[#out + 1] = f.t or ''
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
local nxt = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local due = -1
if nxt[2] then
  due = math.max(tonumber(nxt[2]) - now, 0)
end
return {C_OK, due, {}, out}
