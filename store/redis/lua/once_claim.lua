-- once_claim.lua: claim an inbound event's key until its handling ends
-- (core.Values.ClaimOnce).
--
-- KEYS[1]  the once key: a string with a TTL, holding '~' and the
--          holder's name while claimed, anything else once done (a
--          confirmed key holds '=', one Once took its caller's name)
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  the claim: '~' and the holder's name
-- ARGV[5]  hold in ms
--
-- Returns {C_OK, 1} when the key was free, lapsed or this holder's (it
-- is the holder's now, until the hold passes), {C_OK, 2} when another
-- holder's claim is on it, {C_OK, 3} when it is done.

local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[4] then
  if string.sub(cur, 1, 1) == '~' then
    return {C_OK, 2, {}, {}}
  end
  return {C_OK, 3, {}, {}}
end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5])
return {C_OK, 1, {}, {}}
