-- read.lua: one question's hash and its document, read at one moment.
-- A read that goes through the autopipeliner runs this, because two
-- commands queued there may leave in different batches, with another
-- client's close or purge in between (a question open with a resolution,
-- or a hash without its document).
--
-- The resolution's key is an argument, not a key: an open question has
-- none, and while a cluster moves the shard's slot, Redis refuses a
-- script that declares a key it does not hold (TRYAGAIN) for as long as
-- the move lasts. record reads it only once the hash says closed, when
-- it exists, in the same slot as the others.
--
-- KEYS[1]  question hash          ARGV[1]  its resolution's key
-- KEYS[2]  question document
--
-- Returns {C_OK, 0, fields, {}}   fields = the hash, with the document
--                                 under "doc" and resolution under
--                                 "res"; empty for no question

return {C_OK, 0, record(KEYS[1], KEYS[2], ARGV[1]), {}}
