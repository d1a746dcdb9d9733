-- resolve.lua: the chokepoint (laws 1 and 2). Applies one transition to a
-- question only while it is open: records form items, closes it when the
-- transition says so, appends the event, enqueues an update for every
-- card and publishes the wake-up, all in one step. Every field it needs
-- is read with one HMGET and every field it writes goes in one HSET.
-- The deadline and run-open indexes are left as they are: their readers
-- (Due, EndRun) skip and drop members whose question is no longer open,
-- and Purge drops the rest, so a close pays for neither.
--
-- KEYS[1]  question hash          KEYS[4]  open index
-- KEYS[2]  event stream           KEYS[5]  closed index (zset, ms)
-- KEYS[3]  event counter          KEYS[6]  question document
--                                 KEYS[7..] outbox streams, as ARGV[3]
--
-- ARGV[1..3] shard, several-shards flag, surfaces (see common.lua)
-- ARGV[4]  question id            ARGV[9]  resolution JSON, "" for none
-- ARGV[5]  wake-up channel        ARGV[10] close event JSON, "" for none
-- ARGV[6]  now as JSON string     ARGV[11] item event JSON, "" for none
-- ARGV[7]  now ms                 ARGV[12] the caller's fingerprint of the
-- ARGV[8]  state when closing              question as it read it ("" for
--                                          none): "nm na deadline renot nv"
--                                 ARGV[13] voter key, "" for no vote
--                                 ARGV[14] vote JSON
--                                 ARGV[15] the vote's choice
--                                 ARGV[16] votes for that choice that close
--                                 ARGV[17] n items, then n pairs:
--                                          item id, answer JSON
--                                 then, after the pairs (h = 18 + 2n):
--                                 ARGV[h]   the attempt: an id unique to
--                                           this call of Resolve
--                                 ARGV[h+1] card held for the caller's
--                                           response (its n), 0 for none
--                                 ARGV[h+2] the held update's key
--                                 ARGV[h+3] the hold in ms
--                                 ARGV[h+4] the store's clock in ms, ""
--                                           for the server's
-- With a held card, KEYS ends with that card's surface's zset of retries
-- and held hash (after the outbox streams): its update is held there
-- (common.lua's hold_card) instead of going on the stream.
--
-- With items, the question closes only once every item ("ni" of them)
-- has an answer; until then the resolution is ignored and the item event
-- is appended instead of the close event. With a vote, the vote is kept
-- under v:<voter> (refused if one is there), counted in vc:<choice> and
-- nv, and the question closes only once vc:<choice> reaches ARGV[16];
-- until then the vote event (ARGV[11]) is appended instead.
--
-- Every transition that changes the question adds its attempt to "at",
-- marked with a "!" if it closed the question. A run that finds its own
-- attempt there is the same call sent again (go-redis sends a command
-- again when its reply was lost with the connection, and an autopipelined
-- batch goes again whole): the first run applied it, so this one changes
-- nothing. Rather than tell the caller it lost, voted or answered already,
-- it answers as applied, with the hash; or, if the first run left the
-- question open and another closed it since, with C_APPLIED, so that the
-- caller is not told it closed it.
--
-- Returns {C_OK, 1, {}, {state}}        applied, and the question was as
--                                       the caller read it: the caller
--                                       applies the transition to its copy;
--                                       state is the state after it
--         {C_OK, 0, fields}             applied, by this run or, sent
--                                       again, by the first; fields = the
--                                       hash as it now stands
--         {C_NOT_FOUND}                 no such question
--         {C_NOT_OPEN, 0, fields}       closed already; nothing changed
--         {C_ITEM_ANSWERED, 0, fields}  an item has an answer (or is given
--                                       twice); nothing changed
--         {C_VOTED, 0, fields}          the voter's vote is already
--                                       counted; nothing changed
--         {C_APPLIED, 0, fields}        this transition was applied by an
--                                       earlier run, and the question has
--                                       closed since; nothing changed

local q = KEYS[1]
local id = ARGV[4]
local f = redis.call('HMGET', q, 'state', 'om', 'ni', 'nm', 'na', 'deadline', 'renot', 'ver', 'ms:1', 'm:1', 'ev', 'nv',
  'mk:1', 'doc', 'at')
local state = f[1]
if not state then
  return {C_NOT_FOUND, 0, {}, {}}
end
local n = tonumber(ARGV[17])
local h = 18 + 2 * n
local attempt = ARGV[h]
-- refused returns the refusal code, or what this attempt's first run
-- did if it was applied already (see above).
local function refused(code)
  local at = ' ' .. (f[15] or '') .. ' '
  if string.find(at, ' ' .. attempt .. '! ', 1, true) then
    code = C_OK -- it closed the question
  elseif string.find(at, ' ' .. attempt .. ' ', 1, true) then
    code = state == 'open' and C_OK or C_APPLIED
  end
  return {code, 0, record(q, KEYS[6]), {}}
end
if state ~= 'open' then
  return refused(C_NOT_OPEN)
end
local nm, na = f[4] or '0', f[5] or '0'
local nv = f[12] or '0'
local as_read = ARGV[12] ~= '' and ARGV[12] == nm .. ' ' .. na .. ' ' .. (f[6] or '') .. ' ' .. (f[7] or '0') .. ' ' .. nv

local set = {q}
local voted = ARGV[13] ~= ''
local votes = 0
if voted then
  if redis.call('HEXISTS', q, 'v:' .. ARGV[13]) == 1 then
    return refused(C_VOTED)
  end
  votes = tonumber(redis.call('HGET', q, 'vc:' .. ARGV[15]) or '0') + 1
  set[#set + 1] = 'v:' .. ARGV[13]
  set[#set + 1] = ARGV[14]
  set[#set + 1] = 'vc:' .. ARGV[15]
  set[#set + 1] = votes
  set[#set + 1] = 'nv'
  set[#set + 1] = tonumber(nv) + 1
end

local seen = {}
for i = 0, n - 1 do
  local item = ARGV[18 + 2 * i]
  if seen[item] or redis.call('HEXISTS', q, 'a:' .. item) == 1 then
    return refused(C_ITEM_ANSWERED)
  end
  seen[item] = true
  set[#set + 1] = 'a:' .. item
  set[#set + 1] = ARGV[19 + 2 * i]
end

local answered = tonumber(na) + n
local closing = ARGV[9] ~= ''
if closing and n > 0 then
  closing = answered >= tonumber(f[3] or '0')
end
if closing and voted then
  closing = votes >= tonumber(ARGV[16])
end

if closing or n > 0 or voted then
  local ver = tonumber(f[8] or '0') + 1
  set[#set + 1] = 'ver'
  set[#set + 1] = ver
  local mine = attempt
  if closing then
    mine = attempt .. '!'
  end
  set[#set + 1] = 'at'
  set[#set + 1] = f[15] and f[15] .. ' ' .. mine or mine
  if n > 0 then
    set[#set + 1] = 'na'
    set[#set + 1] = answered
  end
  if closing then
    state = ARGV[8]
    set[#set + 1] = 'state'
    set[#set + 1] = state
    set[#set + 1] = 'closed'
    set[#set + 1] = ARGV[7]
    -- The resolution, longer than a listpack value and only ever read
    -- whole, follows the document in its key (record.go), so the hash
    -- stays compact; records that keep the document in the hash keep the
    -- resolution there too. SET rather than APPEND: APPEND would leave
    -- the string with as much room again.
    if f[14] then
      set[#set + 1] = 'res'
      set[#set + 1] = ARGV[9]
    else
      redis.call('SET', KEYS[6], (redis.call('GET', KEYS[6]) or '') .. '\30' .. ARGV[9])
    end
  end
  local ev
  if closing then
    -- om is the open index member less its ":<id>" ending (records
    -- written before keep the whole member; record.go)
    local om = f[2] or ''
    if #om == 18 then
      om = om .. ':' .. id
    end
    redis.call('ZREM', KEYS[4], om)
    redis.call('ZADD', KEYS[5], ARGV[7], id)
    ev = ARGV[10]
  else
    ev = ARGV[11]
  end
  if ev ~= '' then
    local _, eid = append_event(KEYS[2], KEYS[3], ev)
    set[#set + 1] = 'ev'
    set[#set + 1] = with_event(f[11], eid)
  end
  redis.call('HSET', unpack(set))

  local boxes = outboxes(7)
  local held = tonumber(ARGV[h + 1] or '0')
  for i = 1, tonumber(nm) do
    if i == held then
      local card = card_value(f[10], f[13])
      if i > 1 then
        local c = redis.call('HMGET', q, 'm:' .. i, 'mk:' .. i)
        card = card_value(c[1], c[2])
      end
      hold_card(KEYS[#KEYS - 1], KEYS[#KEYS], ARGV[h + 2], clock_ms(ARGV[h + 4]) + tonumber(ARGV[h + 3]), ver, ARGV[6], card)
    elseif i == 1 then
      enqueue_card(boxes, id, ARGV[6], ver, i, f[9], card_value(f[10], f[13]))
    else
      enqueue_update(q, id, boxes, ARGV[6], ver, i)
    end
  end
  redis.call('PUBLISH', ARGV[5], id)
end
if as_read then
  return {C_OK, 1, {}, {state}}
end
return {C_OK, 0, record(q, KEYS[6]), {}}
