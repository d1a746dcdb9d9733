-- retry.lua: take a delivery back from its consumer and make it due
-- again after a wait: it leaves the stream (so no claim hands it out
-- early) for the shard's zset of retries, which claim.lua moves back onto
-- the stream once the time comes. One step, so the delivery is always in
-- exactly one of the two places.
--
-- KEYS[1]  outbox stream
-- KEYS[2]  the stream's retries (zset, due ms)
--
-- ARGV[1]  consumer group         ARGV[4]  wait in ms (>= 0)
-- ARGV[2]  consumer               ARGV[5]  attempts so far
-- ARGV[3]  stream id              ARGV[6]  delivery JSON
--                                 ARGV[7]  the store's clock in ms, ""
--                                          for the server's
--
-- Returns {C_OK, 1} moved to the retries
--         {C_OK, 0} not this consumer's (acked, or taken over meanwhile):
--                   nothing changed

if not take_claim(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then
  return {C_OK, 0, {}, {}}
end
redis.call('ZADD', KEYS[2], clock_ms(ARGV[7]) + tonumber(ARGV[4]), ARGV[5] .. '|' .. ARGV[3] .. '|' .. ARGV[6])
return {C_OK, 1, {}, {}}
