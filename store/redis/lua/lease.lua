-- lease.lua: take or renew an adapter's lease (core.Values.Lease).
--
-- KEYS[1]  the lease key (a string holding the owner, with a TTL)
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  owner
-- ARGV[5]  ttl in ms
--
-- Returns {C_OK, 1} when the lease was free, expired or already the
-- owner's (its TTL is then reset), {C_OK, 0} when another owner holds it.

local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[4] then
  return {C_OK, 0, {}, {}}
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
return {C_OK, 1, {}, {}}
