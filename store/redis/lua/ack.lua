-- ack.lua: a consumer is done with a delivery it claimed: take it off
-- the group's pending list and out of the stream, in one step, but only
-- while it is still that consumer's claim. A consumer frozen past the
-- idle limit (a GC pause, a stopped VM) whose send then goes on must not
-- remove an entry another consumer has taken over meanwhile: if that
-- consumer's send fails, its hand-back (retry.lua) would find nothing,
-- and the delivery would never go out again (law 4).
--
-- KEYS[1]  outbox stream
--
-- ARGV[1]  consumer group
-- ARGV[2]  consumer
-- ARGV[3]  stream id
--
-- Returns {C_OK, 1} removed
--         {C_OK, 0} not this consumer's (acked already, handed back, or
--                   taken over meanwhile): nothing changed

if not take_claim(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then
  return {C_OK, 0, {}, {}}
end
return {C_OK, 1, {}, {}}
