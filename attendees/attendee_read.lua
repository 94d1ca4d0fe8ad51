-- attendee_read: the same fields of several hashes in one call (the attendees a search found, or their badges'
-- jobs): one command and one reply for the intake to parse, instead of a pipeline of one HMGET a hash. Reads only.
-- flags: no-writes
-- KEYS <hash>...
-- ARGV <field>...
-- Returns one list of values a key, in KEYS order (a missing hash: all false).
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('HMGET', KEYS[i], unpack(ARGV))
end
return out
