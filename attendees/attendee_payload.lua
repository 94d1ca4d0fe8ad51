-- attendee_payload: a badge job's payload made again from the corrected list entry, so its next print says what
-- staff fixed.
-- KEYS job:<job_id>
-- ARGV <payload>
-- Not while a printer holds it (printing: that print is under way with the old one; a reprint takes the new one).
-- Returns the job's state, "" when there is no job yet (its first print will be made from the list).
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  return ''
end
if state ~= 'printing' then
  redis.call('HSET', KEYS[1], 'payload', ARGV[1])
end
return state
