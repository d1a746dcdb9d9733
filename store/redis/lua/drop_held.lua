-- drop_held.lua: take back a card update held for the caller's own
-- response (common.lua's hold_card), now that the response carried it.
-- Only while it still waits in the zset of retries (no claim has put it on
-- the stream) and only if the question has not changed since it was held
-- (a later change's edit may have reached the platform before the
-- response did: the held update then puts the card right).
--
-- KEYS[1]  the surface's zset of retries
-- KEYS[2]  the surface's held hash
-- KEYS[3]  question hash
--
-- ARGV[1]  the held update's key
--
-- Returns {C_OK, 1} dropped
--         {C_OK, 0} left alone: gone, claimed, or the question changed

local v = redis.call('HGET', KEYS[2], ARGV[1])
if not v then
  return {C_OK, 0, {}, {}}
end
local ver = string.sub(v, 1, string.find(v, ' ', 1, true) - 1)
if (redis.call('HGET', KEYS[3], 'ver') or '0') ~= ver then
  return {C_OK, 0, {}, {}}
end
redis.call('ZREM', KEYS[1], 'h|' .. ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return {C_OK, 1, {}, {}}
