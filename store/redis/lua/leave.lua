-- leave.lua: forget consumers of one outbox stream that hold nothing:
-- the one leaving, and any idle longer than the given time (dead). Checked
-- and removed in one step, so a consumer that claims something meanwhile
-- is never removed with its claims.
--
-- KEYS[1]  outbox stream
--
-- ARGV[1]  consumer group
-- ARGV[2]  the consumer leaving ("" for none)
-- ARGV[3]  idle ms after which a consumer holding nothing is dead
--
-- Returns {C_OK, number removed}

local idle = tonumber(ARGV[3])
local n = 0
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do
    f[c[i]] = c[i + 1]
  end
  if tonumber(f['pending']) == 0 and (f['name'] == ARGV[2] or tonumber(f['idle']) >= idle) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name'])
    n = n + 1
  end
end
return {C_OK, n, {}, {}}
