-- event_mark.lua: the lowest event number the shard can still give a new
-- event, for readers paging the shards' streams by Seq (events.go's
-- Events). common.lua's append_event numbers an event max(counter + 1,
-- the server clock in µs), so while the clock does not step back no
-- event appended after this runs gets less than this returns.
--
-- KEYS[1]  the shard's event counter ("<n> <hash>")
--
-- Returns {C_OK, mark}

local n = 0
local cur = redis.call('GET', KEYS[1])
if cur then
  n = tonumber(string.match(cur, '^%d+'))
end
local t = redis.call('TIME')
local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
if us > n + 1 then
  n = us - 1
end
return {C_OK, n + 1, {}, {}}
