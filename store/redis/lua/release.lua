-- release.lua: drop an adapter's lease if the caller holds it
-- (core.Values.Release), or an inbound event's claim on its once key
-- (core.Values.ReleaseOnce; a key done never holds a claim's value).
--
-- KEYS[1]  the lease key, or the once key (see once_claim.lua)
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  owner (for a once key: '~' and the holder's name)
--
-- Returns {C_OK, 1} when it was dropped, {C_OK, 0} when the caller did not
-- hold it (nothing changes).

if redis.call('GET', KEYS[1]) == ARGV[4] then
  redis.call('DEL', KEYS[1])
  return {C_OK, 1, {}, {}}
end
return {C_OK, 0, {}, {}}
