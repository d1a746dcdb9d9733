-- migrate_shard.lua: the last step of a shard's migration (migrate.go),
-- once every question of it is in the current layout (migrate.lua): the
-- event counter of layout 0 and 1, n alone, gets the newest event's hash
-- after it ("<n> <hash>", common.lua's append_event); the closed index's
-- catch-up (closed_catchup.lua) starts after the newest event, since the
-- closes before it were added to the index as they happened; and the
-- shard's layout is set, so no later open migrates it again. Each part
-- is left alone if done already: replicas may finish at once.
--
-- KEYS[1]  event counter          KEYS[3]  the closed index's cursor
-- KEYS[2]  event stream           KEYS[4]  the shard's layout
--
-- ARGV[1]  the current layout
--
-- Returns {C_OK, 1} migrated now, {C_OK, 0} done already

local v = redis.call('GET', KEYS[4])
if v and tonumber(v) >= tonumber(ARGV[1]) then
  return {C_OK, 0, {}, {}}
end
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)[1]
local cur = redis.call('GET', KEYS[1])
if cur and not string.find(cur, ' ', 1, true) then
  local hash = ''
  if last then
    local f = last[2]
    for k = 1, #f - 1, 2 do
      if f[k] == 'c' then
        hash = string.sub(f[k + 1], -40) -- the hash, a SHA-1 in hex, ends it
      end
    end
  end
  redis.call('SET', KEYS[1], cur .. ' ' .. hash)
end
if last and redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('SET', KEYS[3], last[1])
end
redis.call('SET', KEYS[4], ARGV[1])
return {C_OK, 1, {}, {}}
