-- attendee_status: mark an attendee's ticket valid or cancelled (a desk's cancel, an import's --prune), with the
-- counts.
-- KEYS att:<code> attendees:counts job:<job_id> events
-- ARGV <status> <job_id> <maxlen>
-- <job_id>: the attendee's badge job as the caller read it (KEYS[3] is its record); another answers {"stale"}.
-- A count or the record's version that is no number (a role's user may HSET either) restarts with an event in
-- <events> (bump): a desk's cancel or undo still goes through.
-- A ticket made valid again (a cancel undone) whose badge the cancel withdrew gets it back as never asked for: the
-- withdrawn record (cancelled, so never printed: cancel takes only a queued job) is removed, so the next badge
-- request makes it anew under the same job id.
-- Returns {"changed", <job_id>[, "restored"]}, {"same", <job_id>}, {"unknown"} or {"stale"}.
local a = redis.call('HMGET', KEYS[1], 'st', 't', 'j')
if not a[1] then
  return {'unknown'}
end
if ARGV[2] and a[3] ~= ARGV[2] then
  return {'stale'}
end
if a[1] == ARGV[1] then
  return {'same', a[3]}
end
local function count(status, delta)
  if status == 'valid' then
    bump(KEYS[2], 'expected', delta, KEYS[4], ARGV[3])
    bump(KEYS[2], 'expected:' .. a[2], delta, KEYS[4], ARGV[3])
  else
    bump(KEYS[2], 'cancelled', delta, KEYS[4], ARGV[3])
  end
end
count(a[1], -1)
count(ARGV[1], 1)
redis.call('HSET', KEYS[1], 'st', ARGV[1])
bump(KEYS[1], 'v', 1, KEYS[4], ARGV[3])
if ARGV[1] == 'valid' and KEYS[3] and redis.call('HGET', KEYS[3], 'state') == 'cancelled' then
  -- Every field at once, which removes the hash: HDEL is what the intake's user may run on a job record (a hash).
  redis.call('HDEL', KEYS[3], unpack(redis.call('HKEYS', KEYS[3])))
  return {'changed', a[3], 'restored'}
end
return {'changed', a[3]}
