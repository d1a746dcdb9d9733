-- set_value_if.lua: compare and set a shared value
-- (core.Values.SetValueIf).
--
-- KEYS[1]  the value key (a string, with a TTL if set for a time)
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  the value the caller read ('' for none)
-- ARGV[5]  the value to set, without expiry (never '')
--
-- Returns {C_OK, 1} when the key held ARGV[4] and now holds ARGV[5], or
-- held ARGV[5] already (a call go-redis sends again after its reply was
-- lost finds its own first run's write, and is still told it set it);
-- {C_OK, 0} when it held another value (nothing changes).

local cur = redis.call('GET', KEYS[1]) or ''
if cur == ARGV[5] then
  return {C_OK, 1, {}, {}}
end
if cur ~= ARGV[4] then
  return {C_OK, 0, {}, {}}
end
redis.call('SET', KEYS[1], ARGV[5])
return {C_OK, 1, {}, {}}
