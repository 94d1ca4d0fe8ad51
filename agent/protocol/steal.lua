-- steal: an idle printer takes the oldest job pinned to another printer once it has waited affinity_wait.
-- KEYS q:<owner> inflight:<me> job:<id> events ctl:<me> pinned
-- ARGV <me> <owner> <id> <affinity_ms> <maxlen>
-- <id>: the caller saw it in the pinned index; it must be the oldest in q:<owner>.
-- Returns {"stolen", id}, or {"no", why}: busy, drained (we hold a job or are drained), young (not old enough), moved
-- (no longer oldest in q:<owner>) or stale (not in q:<owner> at all: someone edited the queue by hand; the index entry
-- is dropped, so one hand edit cannot make every idle look try it again).
local id = ARGV[3]
local member = pinned_member(ARGV[2], id)
if redis.call('LLEN', KEYS[2]) > 0 then
  return {'no', 'busy'}
end
if redis.call('GET', KEYS[5]) == 'drain' then
  return {'no', 'drained'}
end
if redis.call('LINDEX', KEYS[1], -1) ~= id then
  if not redis.call('LPOS', KEYS[1], id) then
    redis.call('ZREM', KEYS[6], member)
    return {'no', 'stale'}
  end
  return {'no', 'moved'}
end
local now = now_ms()
local since = tonumber(redis.call('HGET', KEYS[3], 'enqueued_ms') or now)
if now - since < tonumber(ARGV[4]) then
  return {'no', 'young'}
end
redis.call('LMOVE', KEYS[1], KEYS[2], 'RIGHT', 'LEFT')
redis.call('ZREM', KEYS[6], member)
event(KEYS[4], ARGV[5], 'event', 'stolen', 'job_id', id, 'printer', ARGV[1],
  'from', ARGV[2], 'reason', 'waited ' .. (now - since) .. ' ms for ' .. ARGV[2])
return {'stolen', id}
