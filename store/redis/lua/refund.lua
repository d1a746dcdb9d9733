-- refund.lua: give one send back to a send budget (core.Refunder). The
-- budget is redis_rate's GCRA bucket: its value is the theoretical
-- arrival time (tat) in seconds since 2017-01-01 on the server's clock,
-- which each send moves on by one emission interval (period / rate),
-- and a budget with no key is full. A send given back moves tat back by
-- one interval, never before now: a budget is never filled past its
-- burst, and one full again is dropped, as redis_rate would have let it
-- expire. Read and written in one step, so a spend meanwhile on another
-- replica is never overwritten.
--
-- KEYS[1]  the budget (redis_rate's key: "rate:" and the store's)
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  the budget's rate (sends per period)
-- ARGV[5]  the budget's period in seconds
--
-- Returns {C_OK, 1} when a send was given back; {C_OK, 0} when the
-- budget was full already (nothing changes).

local tat = redis.call('GET', KEYS[1])
if not tat then
  return {C_OK, 0, {}, {}}
end
local t = redis.call('TIME')
local now = (t[1] - 1483228800) + (t[2] / 1000000)
local back = tonumber(tat) - ARGV[5] / ARGV[4]
if back <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], back, 'EX', math.ceil(back - now))
end
return {C_OK, 1, {}, {}}
