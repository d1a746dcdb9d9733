-- purge.lua: drop closed questions of one shard, each with its events and
-- index entries, and loose events, all from before a cutoff (law 9). The
-- Go side picks the candidates; each is checked again here, so a question
-- is only dropped if it is still closed before the cutoff.
--
-- KEYS[1]  closed index           KEYS[5]  idempotency keys
-- KEYS[2]  created index          KEYS[6]  deadline index
-- KEYS[3]  event stream           KEYS[7]  run-open index
-- KEYS[4]  loose events
-- KEYS[8..] triples: question hash, the list of its event ids that
--           records written before the "ev" field kept, its document
--
-- A close leaves the question in the deadline and run-open indexes (their
-- readers skip closed questions); the purge takes it out of them.
--
-- ARGV[1]  cutoff ms (exclusive)
-- ARGV[2]  most loose events to drop
-- ARGV[3..] question ids, one per KEYS triple
--
-- Returns {C_OK, questions dropped, {}, {loose events dropped}}

local cutoff = tonumber(ARGV[1])

local function xdel(ids)
  for i = 1, #ids, 500 do
    redis.call('XDEL', KEYS[3], unpack(ids, i, math.min(i + 499, #ids)))
  end
end

local dropped = 0
for j = 3, #ARGV do
  local id = ARGV[j]
  local q = KEYS[8 + 3 * (j - 3)]
  local list = KEYS[9 + 3 * (j - 3)]
  local doc = KEYS[10 + 3 * (j - 3)]
  local score = redis.call('ZSCORE', KEYS[1], id)
  if score and tonumber(score) < cutoff then
    local f = redis.call('HMGET', q, 'run', 'ev', 'idem')
    redis.call('ZREM', KEYS[6], id)
    if f[1] then
      redis.call('ZREM', KEYS[7], f[1] .. '\0' .. id)
    end
    -- Event ids: the "ev" field, and the list that records written before
    -- it existed kept them in.
    local ids = {}
    for eid in string.gmatch(f[2] or '', '%S+') do
      ids[#ids + 1] = eid
    end
    xdel(ids)
    xdel(redis.call('LRANGE', list, 0, -1))
    if f[3] then
      redis.call('HDEL', KEYS[5], f[3])
    end
    redis.call('DEL', q, list, doc)
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    dropped = dropped + 1
  end
end

local loose = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #loose > 0 then
  xdel(loose)
  for i = 1, #loose, 500 do
    redis.call('ZREM', KEYS[4], unpack(loose, i, math.min(i + 499, #loose)))
  end
end
return {C_OK, dropped, {}, {tostring(#loose)}}
