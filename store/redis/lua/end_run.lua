-- end_run.lua: mark a run ended in one shard (keeping the first time) and
-- list the run's questions in the run-open index there. Create checks the
-- same hash in the same shard, so a question is either refused or listed,
-- never missed. A close leaves its question in the index, so the list may
-- hold closed questions too: the caller skips them.
--
-- KEYS[1]  ended runs (hash run -> ms)
-- KEYS[2]  run-open index (zset, lex "<run>\0<id>")
--
-- ARGV[1]  run id
-- ARGV[2]  ended ms
--
-- Returns {C_OK, 0, {}, ids}

local run = ARGV[1]
redis.call('HSETNX', KEYS[1], run, ARGV[2])
local members = redis.call('ZRANGEBYLEX', KEYS[2], '[' .. run .. '\0', '(' .. run .. '\1')
local ids = {}
local want = #run + 1 + 17
for _, m in ipairs(members) do
  -- a longer run id that starts with "<run>\0" also falls in the range
  if #m == want then
    ids[#ids + 1] = string.sub(m, #run + 2)
  end
end
return {C_OK, 0, {}, ids}
