-- common.lua: constants and helpers shared by the scripts. The Go side
-- prepends this file to every script, so each transition is still one
-- EVAL touching one shard. Nothing here runs on its own: it only defines.
--
-- Return codes (every script replies {code, n, fields, list}):
local C_OK = 1             -- done; n, fields and list as the script says
local C_NOT_FOUND = 2      -- no such question
local C_NOT_OPEN = 3       -- the question is closed; fields = its hash
local C_EXISTS = 4         -- a question with this id exists
local C_RUN_ENDED = 5      -- the question's run has ended
local C_DEADLINE_MOVED = 7 -- the deadline is not the one expected; fields = its hash
local C_DUPLICATE = 8      -- the idempotency key is taken; list = {that question's id}
local C_APPLIED = 10       -- this very transition was applied already, and another
                           -- closed the question since; fields = its hash
local C_STALE = 11         -- the question is not at the version the change was
                           -- computed from; fields = its hash
--
-- Scripts that append events or enqueue deliveries take, as their first
-- ARGV:
--   ARGV[1] the shard number: the sequence part of every event stream id
--   ARGV[2] the clock event numbers follow, so that a failover that lost
--           the newest events (replication is asynchronous) does not
--           number new ones as the lost ones were numbered, which readers
--           paging by number have already passed (a counter alone goes
--           back with the events a failover loses): "1", the server's
--           clock in microseconds, with several shards, so that readers
--           merging shards see them roughly in time order and no shard
--           numbers below its mark (event_mark.lua); with one shard, "t"
--           and the store's own clock in microseconds, which costs the
--           script no call
--   ARGV[3] the outbox surfaces, space-separated, naming the outbox streams
--           that end KEYS, in that order ("" for scripts without outboxes)

-- outboxes maps each surface named in ARGV[3] to its stream in KEYS,
-- starting at KEYS[first].
local function outboxes(first)
  local t, i = {}, first
  for s in string.gmatch(ARGV[3], '%S+') do
    t[s] = KEYS[i]
    i = i + 1
  end
  return t
end

-- chain_head is "<shard> <n> <hash>" of the newest event this script
-- appended; with_head puts it in the reply, so the Go side knows the
-- stream's head to witness in the next events it builds (core/audit).
local chain_head

-- check_event raises, as append_event does, on an event that came
-- without its audit digest. A script that writes anything before its
-- last append (resolve.lua's several events, renotify.lua's deadline)
-- checks every event first: Redis keeps what a script wrote before it
-- raised, so a call refused halfway would leave half a change (a close's
-- resolution and first event on a question still open).
local function check_event(digest, witness)
  if #digest ~= 64 or witness == '' then
    error('askbridge: an event came without its audit digest')
  end
end

-- append_event adds one event to the shard's event stream under id
-- "<n>-<shard>", n strictly increasing per shard, chained to the
-- stream's newest event (core/audit's package doc says why the link is
-- computed here and the keyed digest in Go), and returns n and that id.
-- digest, witness and body are what Go rendered, as three arguments
-- (chain.go's renderedEvent): the event's keyed digest, the head it
-- witnesses ("-" for none) and the event (eventcodec.go). purged is a
-- checkpoint's runs (purge.lua); closed, on the event of a close,
-- "<closed ms> <question id>".
-- The entry's fields: e the event; c its chain, "<prev or -> <witness
-- or -> <digest> <hash>"; x the runs, on a checkpoint; z the close, from
-- which readers of the closed index catch it up (closed_catchup.lua).
--
-- The shard's counter key holds "<n> <hash>": the newest event's number
-- and hash, both written by the append that made it, so the link costs
-- one GET rather than a read of the stream's newest entry. Nothing else
-- appends to the stream, and a purge appends its checkpoint before it
-- deletes, so the newest entry is always the one the counter names.
-- (Counters of layout 1 held n alone; the migration at open rewrote
-- them, migrate.lua.)
local function append_event(stream, seqkey, digest, witness, body, purged, closed)
  check_event(digest, witness)
  local n, prev = 0, ''
  local cur = redis.call('GET', seqkey)
  if cur then
    local sp = string.find(cur, ' ', 1, true)
    n, prev = tonumber(string.sub(cur, 1, sp - 1)), string.sub(cur, sp + 1)
  end
  n = n + 1
  local us = 0
  if ARGV[2] == '1' then
    local t = redis.call('TIME')
    us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  elseif string.byte(ARGV[2], 1) == 116 then -- "t"
    us = tonumber(string.sub(ARGV[2], 2)) or 0
  end
  if us > n then
    n = us
  end
  local ns = string.format('%.0f', n)
  local id = ns .. '-' .. ARGV[1]
  local x = purged or ''
  local h = redis.sha1hex(prev .. '\n' .. ns .. '\n' .. digest .. '\n' .. x)
  local p = prev
  if p == '' then
    p = '-'
  end
  local c = p .. ' ' .. witness .. ' ' .. digest .. ' ' .. h
  if x ~= '' then
    redis.call('XADD', stream, id, 'e', body, 'c', c, 'x', x)
  elseif closed then
    redis.call('XADD', stream, id, 'e', body, 'c', c, 'z', closed)
  else
    redis.call('XADD', stream, id, 'e', body, 'c', c)
  end
  redis.call('SET', seqkey, ns .. ' ' .. h)
  chain_head = ARGV[1] .. ' ' .. ns .. ' ' .. h
  return n, id
end

-- with_event is a question's event list (its "ev" field: the stream ids
-- of its events, space-separated, so purge can find them) with id added.
local function with_event(ev, id)
  if ev and ev ~= '' then
    return ev .. ' ' .. id
  end
  return id
end

-- record is a question's hash as a script returns it: its fields, its
-- document (key d) under "doc" and, once it is closed, its resolution
-- (key r) under "res". r is read only once the hash says closed: an open
-- question has none, and while a cluster moves the slot, reading a key
-- that is not there is refused (read.lua).
local function record(q, d, r)
  local f = redis.call('HGETALL', q)
  if #f > 0 then
    local state
    for i = 1, #f, 2 do
      if f[i] == 'state' then
        state = f[i + 1]
        break
      end
    end
    local doc, res = redis.call('GET', d), nil
    if state ~= 'open' then
      res = redis.call('GET', r)
    end
    if doc then
      f[#f + 1] = 'doc'
      f[#f + 1] = doc
    end
    if res then
      f[#f + 1] = 'res'
      f[#f + 1] = res
    end
  end
  return f
end

-- card_value is what an update delivery carries of a card: its m:<i>
-- value, then, if the card has one (earlier versions' cards do not), the
-- unit separator and its mk:<i> value (see card.go).
local function card_value(m, mk)
  if m and mk then
    return m .. '\31' .. mk
  end
  return m
end

-- enqueue_update adds an update delivery for card i of the question (as
-- stored on it) to its surface's outbox. The entry keeps the card
-- (card_value), the delivery's key (core.UpdateKey) and its time (a JSON
-- string) as fields of their own; Go puts them together when the
-- delivery is claimed, so nothing here writes JSON. resolve.lua enqueues
-- entries of the same shape that Go made.
local function enqueue_update(q, id, boxes, created, ver, i)
  local c = redis.call('HMGET', q, 'ms:' .. i, 'm:' .. i, 'mk:' .. i)
  local box, card = c[1] and boxes[c[1]], card_value(c[2], c[3])
  if box and card then
    redis.call('XADD', box, '*', 'u', card, 'k', id .. '/update/' .. ver .. '/' .. i, 't', created)
  end
end

-- clock_ms is the store's clock in ms, which every due time of the
-- outbox's zsets of retries is on: the Go side's given value when the
-- store runs on an injected clock (tests), else the server's TIME, which
-- every replica shares.
local function clock_ms(given)
  if given and given ~= '' then
    return tonumber(given)
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- hold enqueues a delivery with a delay (core.Delivery.Delay): not on
-- the stream but in its surface's zset of retries, as member "h|<key>",
-- due at due (ms on clock_ms), with what goes on the stream kept in the
-- surface's held hash under the key: "<ver> <time> <card>" for a card
-- update (ver: its question's version then, which only replicas of
-- earlier versions read; time: its created time as JSON; card:
-- card_value), "d <json>" for a delivery kept whole. Holding a key again
-- replaces it (ZADD moves its due), so a key waits once. claim.lua puts
-- it on the stream once due; cancel.lua takes it back.
local function hold(later, held, key, due, value)
  redis.call('ZADD', later, due, 'h|' .. key)
  redis.call('HSET', held, key, value)
end

-- owns reports whether stream entry id is still consumer's claim in
-- group: pending for it, not acked, handed back or taken over by another
-- consumer after it idled (ack.lua, retry.lua, extend.lua).
local function owns(stream, group, consumer, id)
  local p = redis.call('XPENDING', stream, group, id, id, 1)
  return p[1] ~= nil and p[1][2] == consumer
end

-- take_claim takes entry id off the group's pending list and out of the
-- stream, in one step, if it is still consumer's claim (owns), and
-- reports whether it was: a consumer never removes what another holds.
local function take_claim(stream, group, consumer, id)
  if not owns(stream, group, consumer, id) then
    return false
  end
  redis.call('XACK', stream, group, id)
  redis.call('XDEL', stream, id)
  return true
end

-- with_head is a script's reply with the chain's new head as a fifth
-- element when it appended an event. The Go side wraps every script's
-- body in a function and returns its result through this (scripts.go).
local function with_head(r)
  if chain_head and type(r) == 'table' then
    r[5] = chain_head
  end
  return r
end
