-- extend.lua: a consumer still working on its claimed deliveries renews
-- them, so they do not look idle and are not taken over while a slow send
-- is on its way. An entry another consumer holds is left alone: a
-- consumer presumed dead does not take its work back.
--
-- KEYS[1]  outbox stream
--
-- ARGV[1]  consumer group
-- ARGV[2]  consumer
-- ARGV[3..] stream ids
--
-- Returns {C_OK, number renewed, {}, stream ids not renewed}: those no
-- longer pending for this consumer (another consumer took them over, or
-- they were acked), which the consumer must not send (law 4).

local n, lost = 0, {}
for i = 3, #ARGV do
  if owns(KEYS[1], ARGV[1], ARGV[2], ARGV[i]) then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    n = n + 1
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return {C_OK, n, {}, lost}
