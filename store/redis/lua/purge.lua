-- purge.lua: drop closed questions of one shard, each with its events and
-- index entries, and loose events, all from before a cutoff (law 9). The
-- Go side picks the candidates; each is checked again here, so a question
-- is only dropped if it is still closed before the cutoff, and its hash
-- says it is closed. Before it deletes any chained event it appends a
-- checkpoint (core/audit): the runs of what it drops, so the shard's
-- audit chain verifies across the gap.
--
-- KEYS[1]  closed index           KEYS[5]  idempotency keys
-- KEYS[2]  created index          KEYS[6]  deadline index
-- KEYS[3]  event stream           KEYS[7]  run-open index
-- KEYS[4]  loose events           KEYS[8]  event counter
--                                 KEYS[9]  open index
-- KEYS[10] this call's mark (its attempt id)
-- KEYS[11..] triples: question hash, its document, its resolution
--
-- A close leaves the question in the deadline, run-open and open indexes
-- (their readers skip closed questions); the purge takes it out of them.
-- The Go side has caught the closed index up first.
--
-- ARGV[1..3] shard, clock flag, "" (see common.lua)
-- ARGV[4]  cutoff ms (exclusive)
-- ARGV[5]  most loose events to drop
-- ARGV[6..8] the checkpoint event (common.lua's append_event: digest,
--          witness, body), or three "" to plan
-- ARGV[9]  the checkpoint's ms, for the loose index
-- ARGV[10] the runs the checkpoint was rendered with ("" for none)
-- ARGV[11..] question ids, one per KEYS triple
--
-- A purge runs twice. The first run plans: it changes nothing and
-- returns the runs the candidates' events make. The Go side renders the
-- checkpoint with those runs in its payload, under the keyed digest
-- (core/audit's Checkpoint), and the second run purges, if the runs are
-- still the same; if they are not (an event came meanwhile), it changes
-- nothing, and the Go side plans again.
--
-- A purging run that goes through leaves a mark with what it dropped
-- (for ten minutes, as append.lua's): go-redis sends a command again
-- when its reply was lost with the connection, and the second run would
-- find nothing left and report none dropped, so the Go side, taking a
-- short batch for the last, would stop. The second run finds the mark
-- and reports the first run's counts, changing nothing.
--
-- Returns {C_OK, 0, {}, {runs}}              planned
--         {C_OK, questions dropped, {}, {loose events dropped}}
--         {C_STALE, 0, {}, {runs}}           the runs are not ARGV[10];
--                                            nothing changed

if ARGV[6] ~= '' then
  local seen = redis.call('GET', KEYS[10])
  if seen then
    local sp = string.find(seen, ' ', 1, true)
    return {C_OK, tonumber(string.sub(seen, 1, sp - 1)), {}, {string.sub(seen, sp + 1)}}
  end
end

local cutoff = tonumber(ARGV[4])

local function xdel(ids)
  for i = 1, #ids, 500 do
    redis.call('XDEL', KEYS[3], unpack(ids, i, math.min(i + 499, #ids)))
  end
end

-- The questions still closed before the cutoff, and every event id to drop.
-- The closed index alone is not trusted: a question its hash says is
-- open is kept, whatever put it in the index (a close cut short by a
-- script error, before the scripts checked their events first), and
-- taken out of the closed index when purging; its close, when it comes,
-- marks it again.
local drop, eids, still_open = {}, {}, {}
for j = 11, #ARGV do
  local id = ARGV[j]
  local score = redis.call('ZSCORE', KEYS[1], id)
  if score and tonumber(score) < cutoff then
    local base = 11 + 3 * (j - 11)
    local q = {id = id, q = KEYS[base], doc = KEYS[base + 1], res = KEYS[base + 2]}
    q.f = redis.call('HMGET', q.q, 'run', 'ev', 'idem', 'om', 'state')
    if q.f[5] == 'open' then
      still_open[#still_open + 1] = id
    else
      for eid in string.gmatch(q.f[2] or '', '%S+') do
        eids[#eids + 1] = eid
      end
      drop[#drop + 1] = q
    end
  end
end
local loose = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[4], 'LIMIT', 0, tonumber(ARGV[5]))
for _, eid in ipairs(loose) do
  eids[#eids + 1] = eid
end

-- The checkpoint: each dropped chained event is a run of its own, and a
-- dropped checkpoint's runs are carried; sorted by position, a run joins
-- the one before when it links to its last hash (audit.Runs does the
-- same in Go).
local parts = {}
for _, eid in ipairs(eids) do
  local e = redis.call('XRANGE', KEYS[3], eid, eid)[1]
  if e then
    local f = {}
    for k = 1, #e[2] - 1, 2 do
      f[e[2][k]] = e[2][k + 1]
    end
    local p, h = string.match(f.c or '', '^(%S+) %S+ %x+ (%x+)$')
    if h then
      if p == '-' then
        p = ''
      end
      local n = tonumber(string.match(eid, '^(%d+)-'))
      parts[#parts + 1] = {n, n, p, h}
      for run in string.gmatch(f.x or '', '%S+') do
        local a, b, p, l = string.match(run, '^(%d+):(%d+):(%x*):(%x+)$')
        if a then
          parts[#parts + 1] = {tonumber(a), tonumber(b), p, l}
        end
      end
    end
  end
end
local purged = ''
if #parts > 0 then
  table.sort(parts, function(a, b) return a[1] < b[1] end)
  local runs = {}
  for _, p in ipairs(parts) do
    local last = runs[#runs]
    if last and last[4] == p[3] and last[2] < p[1] then
      last[2], last[4] = p[2], p[4]
    else
      runs[#runs + 1] = {p[1], p[2], p[3], p[4]}
    end
  end
  local out = {}
  for i, r in ipairs(runs) do
    out[i] = string.format('%.0f', r[1]) .. ':' .. string.format('%.0f', r[2]) .. ':' .. r[3] .. ':' .. r[4]
  end
  purged = table.concat(out, ' ')
end
if ARGV[6] == '' then
  return {C_OK, 0, {}, {purged}}
elseif purged ~= ARGV[10] then
  return {C_STALE, 0, {}, {purged}}
end
if purged ~= '' then
  local _, cid = append_event(KEYS[3], KEYS[8], ARGV[6], ARGV[7], ARGV[8], purged)
  redis.call('ZADD', KEYS[4], ARGV[9], cid)
end

for _, id in ipairs(still_open) do
  redis.call('ZREM', KEYS[1], id)
end
for _, q in ipairs(drop) do
  redis.call('ZREM', KEYS[6], q.id)
  if q.f[1] then
    redis.call('ZREM', KEYS[7], q.f[1] .. '\0' .. q.id)
  end
  if q.f[3] then
    redis.call('HDEL', KEYS[5], q.f[3])
  end
  if q.f[4] then
    redis.call('ZREM', KEYS[9], q.f[4] .. ':' .. q.id)
  end
  redis.call('DEL', q.q, q.doc, q.res)
  redis.call('ZREM', KEYS[1], q.id)
  redis.call('ZREM', KEYS[2], q.id)
end
xdel(eids)
if #loose > 0 then
  for i = 1, #loose, 500 do
    redis.call('ZREM', KEYS[4], unpack(loose, i, math.min(i + 499, #loose)))
  end
end
redis.call('SET', KEYS[10], #drop .. ' ' .. #loose, 'PX', 600000)
return {C_OK, #drop, {}, {tostring(#loose)}}
