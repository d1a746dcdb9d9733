-- cancel.lua: take back a delivery enqueued with a delay (common.lua's
-- hold) before a claim has put it on the stream, and, when the canceller
-- gives a version, only while the question is still at it (a later
-- change's edit may have reached the platform before the response the
-- canceller showed: the delayed update then puts the card right).
--
-- KEYS[1]  the surface's zset of retries
-- KEYS[2]  the surface's held hash
-- KEYS[3]  question hash (read only with a version)
--
-- ARGV[1]  the delivery's key
-- ARGV[2]  the question's version the cancel holds for, "" for none
--
-- Returns {C_OK, 1} cancelled
--         {C_OK, 0} left alone: gone, claimed, or the question moved on
--                   (or is gone)

if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  return {C_OK, 0, {}, {}}
end
if ARGV[2] ~= '' then
  local f = redis.call('HMGET', KEYS[3], 'state', 'ver')
  if not f[1] or (f[2] or '0') ~= ARGV[2] then
    return {C_OK, 0, {}, {}}
  end
end
redis.call('ZREM', KEYS[1], 'h|' .. ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return {C_OK, 1, {}, {}}
