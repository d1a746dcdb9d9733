-- migrate.lua: rewrite questions of an earlier layout into the current
-- one (record.go; migrate.go runs it when a store opens). Each question
-- is rewritten in one step and a question already in the current layout
-- is left as it is, so two replicas migrating at once, or one that starts
-- again after it was killed halfway, rewrite each question once.
--
--   the document held in the hash's "doc" field goes to its own key;
--   the resolution, held in the hash's "res" field or after the document
--   in its key (behind the record separator 0x1e), goes to its own key;
--   om, if it is the whole open index member, is cut to its first 18 bytes;
--   event ids kept in a list key of their own go first into "ev".
--
-- KEYS     quadruples: question hash, its document, its resolution, the
--          list of its event ids of layout 0
-- ARGV[4..] question ids, one per quadruple (ARGV[1..3] as common.lua)
--
-- Returns {C_OK, questions rewritten}

local n = 0
for j = 4, #ARGV do
  local b = 4 * (j - 4)
  local q, d, r, list = KEYS[b + 1], KEYS[b + 2], KEYS[b + 3], KEYS[b + 4]
  local f = redis.call('HMGET', q, 'doc', 'res', 'om', 'ev')
  local changed = false
  if f[1] then
    redis.call('SET', d, f[1])
    redis.call('HDEL', q, 'doc')
    changed = true
  end
  if f[2] then
    redis.call('SET', r, f[2])
    redis.call('HDEL', q, 'res')
    changed = true
  else
    local doc = redis.call('GET', d)
    local sp = doc and string.find(doc, '\30', 1, true)
    if sp then
      redis.call('SET', r, string.sub(doc, sp + 1))
      redis.call('SET', d, string.sub(doc, 1, sp - 1))
      changed = true
    end
  end
  if f[3] and #f[3] > 18 then
    redis.call('HSET', q, 'om', string.sub(f[3], 1, 18))
    changed = true
  end
  local ids = redis.call('LRANGE', list, 0, -1)
  if #ids > 0 then
    local ev = table.concat(ids, ' ')
    if f[4] and f[4] ~= '' then
      ev = ev .. ' ' .. f[4]
    end
    redis.call('HSET', q, 'ev', ev)
    redis.call('DEL', list)
    changed = true
  end
  if changed then
    n = n + 1
  end
end
return {C_OK, n, {}, {}}
