-- closed_catchup.lua: bring a shard's closed index up to date from the
-- closes' marks. A close does not add its question to the closed index
-- (resolve.lua): it marks its first event with "<closed ms> <id>" (the
-- entry's z field). Every reader of the closed index (SearchClosed,
-- Between by closed time, Purge) first runs this until it reports the
-- stream read to its end: it reads the events after the cursor, adds
-- each marked close to the index and moves the cursor on, all in one
-- step, so replicas catching up at once add each close once (a ZADD of
-- the same member and score changes nothing) and the cursor only moves
-- forward. A purge deletes events only of questions the index holds, so
-- no unread mark is lost to it.
--
-- KEYS[1]  event stream           KEYS[3]  cursor: the id of the newest
-- KEYS[2]  closed index                    event read ("" or absent: none)
--
-- ARGV[1]  most events to read
--
-- Returns {C_OK, events read}

local cur = redis.call('GET', KEYS[3])
local from = '-'
if cur and cur ~= '' then
  from = '(' .. cur
end
local es = redis.call('XRANGE', KEYS[1], from, '+', 'COUNT', tonumber(ARGV[1]))
for _, e in ipairs(es) do
  local f = e[2]
  for k = 5, #f - 1, 2 do -- e and c come first
    if f[k] == 'z' then
      local sp = string.find(f[k + 1], ' ', 1, true)
      redis.call('ZADD', KEYS[2], string.sub(f[k + 1], 1, sp - 1), string.sub(f[k + 1], sp + 1))
    end
  end
end
if #es > 0 then
  redis.call('SET', KEYS[3], es[#es][1])
end
return {C_OK, #es, {}, {}}
