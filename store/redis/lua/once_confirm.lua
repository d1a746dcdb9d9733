-- once_confirm.lua: mark an inbound event's key done once its handling
-- has ended (core.Values.ConfirmOnce).
--
-- KEYS[1]  the once key (see once_claim.lua)
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  the caller's claim: '~' and the holder's name
-- ARGV[5]  ttl in ms
--
-- Returns {C_OK, 1} when the key was this holder's or free and is done
-- now, until the ttl passes; {C_OK, 0} when it is left as it is: another
-- holder's claim (that holder confirms or releases it), or done already.

local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[4] then
  return {C_OK, 0, {}, {}}
end
redis.call('SET', KEYS[1], '=', 'PX', ARGV[5])
return {C_OK, 1, {}, {}}
