-- beat.lua: swap the heartbeat (core.Store.Beat), telling the one it
-- replaced, once, even when go-redis sends the call again after its reply
-- was lost (the first run has then already written it).
--
-- KEYS[1]  the heartbeat: "<ms> <nonce> <previous ms or ->", or "<ms>"
--          as earlier versions wrote it
--
-- ARGV[1..3] unused (see common.lua)
-- ARGV[4]  now, in ms
-- ARGV[5]  the caller's nonce, new for each call
--
-- Returns {C_OK, 0, {}, {previous ms or "-"}}: the heartbeat this call
-- replaced; a run that finds its own nonce is the same call sent again,
-- and tells what the first run replaced, changing nothing.

local cur = redis.call('GET', KEYS[1])
local prev = '-'
if cur then
  local ms, nonce, before = string.match(cur, '^(%d+) (%S+) (%S+)$')
  if nonce == ARGV[5] then
    return {C_OK, 0, {}, {before}}
  end
  prev = ms or cur
end
redis.call('SET', KEYS[1], ARGV[4] .. ' ' .. ARGV[5] .. ' ' .. prev)
return {C_OK, 0, {}, {prev}}
