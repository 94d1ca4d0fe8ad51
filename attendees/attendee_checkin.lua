-- attendee_checkin: count the attendees whose badge has been confirmed printed since the last count (checked
-- in).
-- KEYS attendees:counts attendees:badging done:<job_id>...
-- ARGV <job_id>...
-- <job_id> i goes with KEYS[2 + i], its completion gate: set only once a printer confirmed the badge. Counting each
-- job once and dropping it from badging in the same step makes running this twice, or from two places, count once.
-- Returns the number newly counted.
local counted = 0
for i, id in ipairs(ARGV) do
  if redis.call('EXISTS', KEYS[2 + i]) == 1 then
    local ticket_type = redis.call('HGET', KEYS[2], id)
    if ticket_type then
      redis.call('HDEL', KEYS[2], id)
      redis.call('HINCRBY', KEYS[1], 'checked_in', 1)
      redis.call('HINCRBY', KEYS[1], 'checked_in:' .. ticket_type, 1)
      counted = counted + 1
    end
  end
end
return counted
