-- attendee_status: mark an attendee's ticket valid or cancelled (a desk's cancel, an import's --prune), with the
-- counts.
-- KEYS att:<code> attendees:counts job:<job_id> events preprint:run:<run>:voids done:<pp_job_id> preprint:run:<run>
-- ARGV <status> <job_id> <maxlen> [<preprint_run> <code>]
-- <job_id>: the attendee's badge job as the caller read it (KEYS[3] is its record); another answers {"stale"}.
-- A count or the record's version that is no number (a role's user may HSET either) restarts with an event in
-- <events> (bump): a desk's cancel or undo still goes through.
-- A ticket made valid again (a cancel undone) whose badge the cancel withdrew gets it back as never asked for: the
-- withdrawn record (cancelled, so never printed: cancel takes only a queued job) is removed, so the next badge
-- request makes it anew under the same job id.
-- <preprint_run>: the pre-print run the record names as read (preprint/), with its void list, the completion gate of
-- the attendee's pre-print job and the run's hash in KEYS 5-7 (sent only with a run). A cancel makes the pre-printed
-- badge void and puts it on the void list in this step, as put.lua does (prelude.lua, preprint_void). An undo takes
-- it off again only while there is nothing to pull: the cancel voided it, it never printed, and the run is still only planned (neither on
-- the printers nor written as a PDF), so the run prints it as planned. Else it stays void: the door prints theirs.
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
local before = (ARGV[4] or '') ~= '' and badge_shown(KEYS[1])
redis.call('HSET', KEYS[1], 'st', ARGV[1])
bump(KEYS[1], 'v', 1, KEYS[4], ARGV[3])
if before and ARGV[1] ~= 'valid' then
  preprint_void(KEYS[1], KEYS[5], KEYS[6], ARGV[5], ARGV[4], before, badge_shown(KEYS[1]))
elseif before then
  preprint_unvoid(KEYS[1], KEYS[5], KEYS[6], KEYS[7], ARGV[5], ARGV[4])
end
if ARGV[1] == 'valid' and KEYS[3] and redis.call('HGET', KEYS[3], 'state') == 'cancelled' then
  -- Every field at once, which removes the hash: HDEL is what the intake's user may run on a job record (a hash).
  redis.call('HDEL', KEYS[3], unpack(redis.call('HKEYS', KEYS[3])))
  return {'changed', a[3], 'restored'}
end
return {'changed', a[3]}
