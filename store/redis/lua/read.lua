-- read.lua: one question's hash and its document, read at one moment.
-- A read that goes through the autopipeliner runs this, because two
-- commands queued there may leave in different batches, with another
-- client's close or purge in between (a question open with a resolution,
-- or a hash without its document).
--
-- KEYS[1]  question hash          KEYS[2]  question document
--                                 KEYS[3]  its resolution
--
-- Returns {C_OK, 0, fields, {}}   fields = the hash, with the document
--                                 under "doc" and resolution under
--                                 "res"; empty for no question

return {C_OK, 0, record(KEYS[1], KEYS[2], KEYS[3]), {}}
