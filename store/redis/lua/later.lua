-- later.lua: enqueue deliveries with a delay (core.Delivery.Delay) on one
-- surface of one shard, each due once its delay has passed on the store's
-- clock (common.lua's hold).
--
-- KEYS[1]  the surface's zset of retries
-- KEYS[2]  the surface's held hash
--
-- ARGV[1]  the store's clock in ms, "" for the server's
-- then     triples: the delivery's key, its delay in ms, the value to
--          hold ("d <json>")
--
-- Returns {C_OK, n} with n the deliveries held

local now = clock_ms(ARGV[1])
local n = 0
for j = 2, #ARGV, 3 do
  hold(KEYS[1], KEYS[2], ARGV[j], now + tonumber(ARGV[j + 1]), ARGV[j + 2])
  n = n + 1
end
return {C_OK, n, {}, {}}
