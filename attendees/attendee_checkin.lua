-- attendee_checkin: count the attendees whose badge has been confirmed printed since the last count (checked
-- in).
-- KEYS attendees:counts attendees:badging events done:<job_id>...
-- ARGV <maxlen> <job_id>...
-- <job_id> i (ARGV[i], from 2) goes with KEYS[2 + i], its completion gate: set only once a printer confirmed the
-- badge. Counting each job once and dropping it from badging in the same step makes running this twice, or from two
-- places, count once. A count that is no number (a role's user may HSET it) restarts with an event (bump) rather
-- than fail the look that folds it, or leave a badge dropped from badging and never counted.
-- Returns the number newly counted.
local counted = 0
for i = 2, #ARGV do
  local id = ARGV[i]
  if redis.call('EXISTS', KEYS[2 + i]) == 1 then
    local ticket_type = redis.call('HGET', KEYS[2], id)
    if ticket_type then
      redis.call('HDEL', KEYS[2], id)
      bump(KEYS[1], 'checked_in', 1, KEYS[3], ARGV[1])
      bump(KEYS[1], 'checked_in:' .. ticket_type, 1, KEYS[3], ARGV[1])
      counted = counted + 1
    end
  end
end
return counted
