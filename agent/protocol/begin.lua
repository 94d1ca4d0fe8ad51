-- begin: the last check before a badge is sent to the printer.
-- KEYS[1] inflight:<me>   KEYS[2] job:<id>   KEYS[3] done:<id>   KEYS[4] events   KEYS[5] dlq   KEYS[6] stats
-- ARGV[1] job_id   ARGV[2] me   ARGV[3] my location   ARGV[4] events maxlen
-- Returns {"not_owner"} (a peer reclaimed it: do NOT print), {"done", by} (already printed: dropped),
-- {"dead", reason} (no readable job: dead-lettered), {"skip", state} (job already final),
-- or {"print", payload, attempts, epoch, maybe_printed_where}.
local id, me = ARGV[1], ARGV[2]
local function event(...)
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', ...)
end
if not redis.call('LPOS', KEYS[1], id) then
  return {'not_owner'}
end
local now = now_ms()
local done_by = redis.call('GET', KEYS[3])
if done_by then
  redis.call('LREM', KEYS[1], 0, id)
  event('event', 'skipped', 'job_id', id, 'printer', me, 'reason', 'already printed by ' .. done_by)
  return {'done', done_by}
end
local job = redis.call('HMGET', KEYS[2], 'payload', 'state', 'maybe_printed_where')
if not job[1] then
  local reason = 'no job record for this id (pushed by hand, or its record was deleted)'
  redis.call('LREM', KEYS[1], 0, id)
  redis.call('LPUSH', KEYS[5], id)
  redis.call('HSET', KEYS[2], 'state', 'dead', 'error', reason, 'printer', me, 'dead_ms', now)
  redis.call('HINCRBY', KEYS[6], 'dead', 1)
  event('event', 'dead', 'job_id', id, 'printer', me, 'reason', reason)
  return {'dead', reason}
end
if job[2] == 'dead' or job[2] == 'printed' then
  redis.call('LREM', KEYS[1], 0, id)
  return {'skip', job[2]}
end
local attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
local epoch = redis.call('HINCRBY', KEYS[2], 'epoch', 1)
redis.call('HSET', KEYS[2], 'state', 'printing', 'printer', me, 'claimed_ms', now)
event('event', 'printing', 'job_id', id, 'printer', me, 'location', ARGV[3], 'attempt', attempts)
return {'print', job[1], attempts, epoch, job[3] or ''}
