-- attendee_status: mark an attendee's ticket valid or cancelled (a desk's cancel, an import's --prune), with the
-- counts.
-- KEYS att:<code> attendees:counts
-- ARGV <status>
-- Returns {"changed", <job_id>}, {"same", <job_id>} or {"unknown"}.
local a = redis.call('HMGET', KEYS[1], 'st', 't', 'j')
if not a[1] then
  return {'unknown'}
end
if a[1] == ARGV[1] then
  return {'same', a[3]}
end
local function count(status, delta)
  if status == 'valid' then
    redis.call('HINCRBY', KEYS[2], 'expected', delta)
    redis.call('HINCRBY', KEYS[2], 'expected:' .. a[2], delta)
  else
    redis.call('HINCRBY', KEYS[2], 'cancelled', delta)
  end
end
count(a[1], -1)
count(ARGV[1], 1)
redis.call('HSET', KEYS[1], 'st', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'v', 1)
return {'changed', a[3]}
