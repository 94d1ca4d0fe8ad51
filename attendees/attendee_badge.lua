-- attendee_badge: the badge for one attendee of the list, created exactly once whoever asks (kiosk, desk, import).
-- KEYS att:<code> job:<job_id> q:<pinned>|pool events stats pinned attendees:badging owned:<created_by>
-- ARGV <code> <version> <job_id> <payload> <pinned> <maxlen> <created_by> [<zone> <zone_printers>]
-- <version>, <job_id>: the record the payload was made from; a record changed since answers {"stale"} (the caller
-- reads again). The job is the attendee's whatever state it is in: a second scan answers with it, never a second
-- badge (that is a staff reprint). <zone>, <zone_printers>: the zone of the token that asks, as enqueue's.
-- owned:<created_by> (KEYS[8], sent only when an intake token asks): the token's set of jobs, which its cap of
-- outstanding jobs counts (intake/outstanding.py), added to in the same step as the job, as enqueue does.
-- An attendee in a pre-print run (preprint/) whose badge is not void gets no badge here: theirs is (or will be) in
-- its box, and the answer is {"preprinted", <its state: "" planned, "preprinted", "handed_over">}.
-- Returns {"queued"} when created now, {"exists", <state>}, {"cancelled"}, {"unknown"}, {"stale"} or
-- {"preprinted", <state>}.
local a = redis.call('HMGET', KEYS[1], 'v', 'st', 'j', 't', 'preprint', 'bs')
if not a[1] then
  return {'unknown'}
end
if a[2] ~= 'valid' then
  return {'cancelled'}
end
if a[5] and a[6] ~= 'void' then
  return {'preprinted', a[6] or ''}
end
if a[3] ~= ARGV[3] then
  return {'stale'}
end
local state = redis.call('HGET', KEYS[2], 'state')
if state then
  return {'exists', state}
end
if a[1] ~= ARGV[2] then
  return {'stale'}
end
add_job(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], ARGV[3], ARGV[4], ARGV[5], ARGV[6], now_ms(), ARGV[8] or '',
  ARGV[9] or '')
redis.call('HSET', KEYS[2], 'created_by', ARGV[7])
if KEYS[8] then
  redis.call('SADD', KEYS[8], ARGV[3])
end
redis.call('HSET', KEYS[7], ARGV[3], a[4])
return {'queued'}
